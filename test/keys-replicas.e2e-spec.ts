import OpenAI from 'openai';
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrations';
import { chatCompletion } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, type TestGateway } from './support/gateway';
import {
  ADMIN_TOKEN,
  admin,
  CHAT_USAGE,
  createKey,
  eventually,
  pricedCatalog,
} from './support/key-store';
import {
  createTestDatabase,
  describeWithPostgres,
  PostgresProxy,
  query,
  type TestDatabase,
} from './support/postgres';

const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };
const ask = (client: OpenAI, text = 'Hi', maxTokens?: number) =>
  client.chat.completions.create({
    model: 'test-gpt',
    messages: [SYSTEM, { role: 'user', content: text }],
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
  });

describeWithPostgres('key store shared by two replicas (PostgreSQL)', () => {
  let db: TestDatabase;
  let proxy: PostgresProxy;
  let upstream: FakeUpstream;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase('replicas');
    // Replica B reaches the database through a proxy the tests can cut.
    proxy = new PostgresProxy(db.url);
    await proxy.start();
    upstream = await new FakeUpstream().start();
    upstream.on('/v1/chat/completions', () => ({
      json: chatCompletion('upstream-gpt', 'Hello', { usage: CHAT_USAGE }),
    }));
    const env = {
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
    };
    [a, b] = await Promise.all([
      startGateway({ ...env, DATABASE_URL: db.url }),
      startGateway({ ...env, DATABASE_URL: proxy.url }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await proxy?.stop();
    await upstream?.stop();
    await db?.drop();
  });

  const MIGRATIONS = [
    '0001_keys_and_usage',
    '0002_usage_team',
    '0003_object_owners',
    '0004_budget_reservations',
    '0005_sessions_and_audit',
    '0006_usage_paging',
    '0007_usage_cached',
    '0008_stored_responses',
  ];
  const client = (gw: TestGateway, key: string): OpenAI =>
    new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });

  it('applied the schema once although both replicas booted at once', async () => {
    const rows = await query(db.url, 'SELECT name FROM kysely_migration');
    expect(rows.map((r) => r.name)).toEqual(MIGRATIONS);
  });

  it('serializes concurrent migrations of a fresh database', async () => {
    const fresh = await createTestDatabase('migrate');
    try {
      const dbs = await Promise.all(
        [1, 2, 3].map(() => openDatabase({ databaseUrl: fresh.url, dataDir: '', poolSize: 2 })),
      );
      const applied = await Promise.all(
        dbs.map((d) => migrateToLatest(d.db as unknown as Kysely<unknown>)),
      );
      await Promise.all(dbs.map((d) => d.close()));
      // Each migration once in all, whichever replica won the lock.
      expect(applied.flat().sort()).toEqual(MIGRATIONS);
    } finally {
      await fresh.drop();
    }
  });

  it('sees a revocation made on the other replica within one second', async () => {
    const { id, key } = await createKey(a, { name: 'shared' });
    await client(b, key).models.list(); // cached on B
    await admin(a, 'POST', `/keys/${id}/revoke`);
    const { afterMs } = await eventually(
      () =>
        client(b, key)
          .models.list()
          .then(
            () => undefined,
            (e: any) => (e.status === 401 && e.error.code === 'api_key_revoked' ? true : undefined),
          ),
      1000,
      'replica B to refuse the revoked key',
    );
    expect(afterMs).toBeLessThan(1000);
  });

  it('refuses a spent budget on both replicas', async () => {
    // Each request costs $0.004275: one on each replica spends more than $0.008 (each
    // reserves about $0.003, a short prompt and 300 output tokens, so both fit).
    const { key } = await createKey(a, {
      name: 'budget',
      budget: { amount_usd: 0.008, period: 'month' },
    });
    await ask(client(b, key), 'Hi', 300);
    await ask(client(a, key), 'Hi', 300);
    const refused = (e: any): true | undefined =>
      e.status === 429 && e.error.code === 'insufficient_quota' ? true : undefined;
    for (const gw of [a, b]) {
      const { afterMs } = await eventually(
        () => ask(client(gw, key), 'Hi', 300).then(() => undefined, refused),
        1500,
        'each replica to see the spend of the other',
      );
      expect(afterMs).toBeLessThan(1500);
    }
  });

  it('keeps serving a cached key through a database restart mid-load and loses no ledger row', async () => {
    const { id, key } = await createKey(a, { name: 'outage' });
    const unknown = await createKey(a, { name: 'never-seen-by-b' });
    const c = client(b, key);
    await ask(c); // cached on B
    let sent = 1;
    const failures: unknown[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) {
        await Promise.all(
          [0, 1, 2].map(() =>
            ask(c).then(
              () => sent++,
              (e: unknown) => failures.push(e),
            ),
          ),
        );
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await proxy.stop();
    const whileDown = sent;
    await new Promise((r) => setTimeout(r, 600));
    // A key B never saw cannot be checked while the database is away: 503, not 401.
    const blind = await client(b, unknown.key)
      .models.list()
      .then(
        () => undefined,
        (e: any) => e,
      );
    expect(blind).toMatchObject({ status: 503 });
    expect(blind.error.code).toBe('key_store_unavailable');
    expect(blind.headers.get('retry-after')).toBe('1');
    expect(sent).toBeGreaterThan(whileDown); // requests went on while it was down
    await proxy.start();
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    expect(failures).toEqual([]);
    const { value: rows } = await eventually(
      async () => {
        const res = await admin(a, 'GET', `/usage?key_id=${id}`);
        return res.body.totals.requests === sent ? res.body.totals.requests : undefined;
      },
      10_000,
      `${sent} ledger rows`,
    );
    expect(rows).toBe(sent);
    const stats = await admin(b, 'GET', '/usage/ledger');
    expect(stats.body).toMatchObject({ dropped: 0, buffered: 0 });
    expect(stats.body.failedFlushes).toBeGreaterThan(0);
  });
});
