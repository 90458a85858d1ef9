import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'kysely';
import OpenAI from 'openai';
import { DATABASE } from '../src/db/db.module';
import type { OpenDatabase } from '../src/db/database';
import { KEY_REPOSITORY, type KeyRepository } from '../src/keys/key-record';
import { issueSecret } from '../src/keys/key-secret';
import { startGateway, type TestGateway } from './support/gateway';
import {
  ADMIN_TOKEN,
  admin,
  createKey,
  eventually,
  gatewayOnStore,
  pricedCatalog,
} from './support/key-store';
import {
  createTestDatabase,
  describeOnEachStore,
  describeWithPostgres,
  type StoreBackend,
  type TestDatabase,
} from './support/postgres';

const FLOOD = 2000;
const LIMIT = 50;

/** Counts the distinct keys the key store looked up, each a read of the real database. */
function countLookups(gw: TestGateway): () => number {
  const repo = gw.app.get<KeyRepository>(KEY_REPOSITORY);
  const read = repo.findBySecretHash.bind(repo);
  // Distinct keys: a slow machine may outlast the real key's cache entry, and its second
  // lookup is not the flood's.
  const seen = new Set<string>();
  repo.findBySecretHash = (hash) => {
    seen.add(hash);
    return read(hash);
  };
  return () => seen.size;
}

/** GET /v1/models with `key` as if from `ip` (the gateway trusts loopback as its proxy). */
async function models(gw: TestGateway, key: string, ip: string): Promise<Response> {
  const res = await fetch(`${gw.baseURL}/models`, {
    headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip },
  });
  await res.arrayBuffer();
  return res;
}

/** Runs `n` calls of `fn`, `width` at a time. */
async function pool<T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

/** Floods of unknown keys against one gateway, on each database the store runs on. */
function floodSuite(env: () => Promise<StoreBackend>) {
  const store = gatewayOnStore(env, {
    TRUST_PROXY: 'loopback',
    AUTH_FAILURE_LIMIT: String(LIMIT),
    AUTH_FAILURE_WINDOW_MS: '60000',
  });

  it('answers 2,000 random well-formed keys from one address with at most the limit of lookups, while a real key elsewhere keeps answering 200', async () => {
    const { key } = await createKey(store.gw, { name: 'real' });
    const lookups = countLookups(store.gw);
    let flooding = true;
    const latencies: number[] = [];
    const real = (async () => {
      const client = new OpenAI({
        baseURL: store.gw.baseURL,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { 'x-forwarded-for': '198.51.100.7' },
      });
      while (flooding) {
        const started = performance.now();
        await client.models.list();
        latencies.push(performance.now() - started);
      }
    })();
    const statuses = await pool(FLOOD, 16, async () => {
      const res = await models(store.gw, issueSecret().secret, '203.0.113.9');
      // Every 429 says when to come back: at most the window away.
      const wait = Number(res.headers.get('retry-after'));
      return res.status !== 429 || (wait >= 1 && wait <= 60) ? res.status : -1;
    });
    flooding = false;
    await real;
    const counts = new Map<number, number>();
    for (const s of statuses) {
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    expect(counts.get(401)).toBe(LIMIT);
    expect(counts.get(429)).toBe(FLOOD - LIMIT);
    // The flood's lookups, and the real key's one (then cached).
    expect(lookups()).toBeLessThanOrEqual(LIMIT + 1);
    expect(latencies.length).toBeGreaterThan(10);
    latencies.sort((a, b) => a - b);
    console.log(
      `flood of ${FLOOD} random keys: ${lookups()} store lookups; real key: ${latencies.length} calls, p50 ${latencies[latencies.length >> 1].toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms`,
    );
  }, 120_000);

  it('refuses a throttled address in the envelope of the endpoint called, with retry-after', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < LIMIT; i++) {
      expect((await models(store.gw, issueSecret().secret, ip)).status).toBe(401);
    }
    const headers = { 'x-forwarded-for': ip };
    const openai = new OpenAI({
      baseURL: store.gw.baseURL,
      apiKey: issueSecret().secret,
      maxRetries: 0,
      defaultHeaders: headers,
    });
    const e1: any = await openai.models.list().catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e1.error).toMatchObject({
      type: 'rate_limit_error',
      code: 'too_many_failed_authentications',
    });
    expect(Number(e1.headers.get('retry-after'))).toBeGreaterThan(0);
    const anthropic = new Anthropic({
      baseURL: store.gw.origin,
      apiKey: issueSecret().secret,
      maxRetries: 0,
      defaultHeaders: headers,
    });
    const e2: any = await anthropic.messages
      .create({
        model: 'local-echo-claude',
        max_tokens: 10,
        system: 'You are a test double.',
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e2.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('accepts a burst of three times the limit from one address on a valid key not cached yet, with one store read', async () => {
    const { key } = await createKey(store.gw, { name: 'burst' });
    const lookups = countLookups(store.gw);
    // A store read slow enough that the whole burst arrives while it is in flight.
    const repo = store.gw.app.get<KeyRepository>(KEY_REPOSITORY);
    const read = repo.findBySecretHash.bind(repo);
    repo.findBySecretHash = (hash) => new Promise((r) => setTimeout(r, 300)).then(() => read(hash));
    try {
      const statuses = await pool(3 * LIMIT, 3 * LIMIT, () =>
        models(store.gw, key, '203.0.113.11').then((r) => r.status),
      );
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(lookups()).toBe(1);
    } finally {
      repo.findBySecretHash = read;
    }
  });

  it('reads the store once for the same unknown key sent from many addresses', async () => {
    const lookups = countLookups(store.gw);
    const guess = issueSecret().secret;
    const statuses = await pool(200, 8, (i) =>
      models(store.gw, guess, `192.0.2.${i % 250}`).then((r) => r.status),
    );
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(lookups()).toBe(1);
  });
}

describeOnEachStore('unknown keys', 'flood', floodSuite);

describeWithPostgres('unknown keys across two replicas (PostgreSQL)', () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase('negcache');
    const env = {
      CATALOG_PATH: pricedCatalog('http://127.0.0.1:9'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      DATABASE_URL: db.url,
      REDIS_URL: '',
    };
    a = await startGateway(env);
    b = await startGateway(env);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.drop();
  });

  it('accepts at once on one replica a key created on the other with a secret it had found in no key', async () => {
    const secret = issueSecret();
    const client = new OpenAI({ baseURL: b.baseURL, apiKey: secret.secret, maxRetries: 0 });
    const lookups = countLookups(b);
    for (let i = 0; i < 3; i++) {
      expect(await client.models.list().catch((e: any) => e.status)).toBe(401);
    }
    expect(lookups()).toBe(1); // remembered as unknown on B
    // The secret gets a key without any announcement (an import straight into the table):
    // B keeps answering from its negative cache...
    const { db: kdb } = a.app.get<OpenDatabase>(DATABASE);
    await sql`INSERT INTO api_keys (id, name, limits, metadata) VALUES ('key_imported', 'imported', '{}', '{}')`.execute(
      kdb,
    );
    await sql`INSERT INTO api_key_secrets (hash, key_id, prefix, last4)
      VALUES (${secret.hash}, 'key_imported', ${secret.prefix}, ${secret.last4})`.execute(kdb);
    expect(await client.models.list().catch((e: any) => e.status)).toBe(401);
    // ...until a key is created on A: its announcement empties B's negative cache.
    expect((await createKey(a, { name: 'any' })).id).toMatch(/^key_/);
    const { afterMs } = await eventually(
      () =>
        client.models.list().then(
          () => true,
          () => undefined,
        ),
      1000,
      'replica B to accept the imported key',
    );
    expect(afterMs).toBeLessThan(1000);
    expect((await admin(b, 'GET', '/keys/key_imported')).status).toBe(200);
  });
});
