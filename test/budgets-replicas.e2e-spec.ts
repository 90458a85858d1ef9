import OpenAI from 'openai';
import { ANSWER_PICO, answerWithFullOutput, chat, counterOf, ledgerTotal } from './support/budgets';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, type TestGateway } from './support/gateway';
import { ADMIN_TOKEN, admin, createKey, eventually, pricedCatalog } from './support/key-store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from './support/postgres';

/** Four answers fit in $0.05 (each reserves about $0.01003 and costs $0.0100125); five do not. */
const BUDGET_USD = 0.05;
const ANSWERS = 4;

describeWithPostgres('budgets shared by two replicas (PostgreSQL)', () => {
  let db: TestDatabase;
  let upstream: FakeUpstream;
  let a: TestGateway;
  let b: TestGateway;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase('budget_replicas');
    upstream = await new FakeUpstream().start();
    answerWithFullOutput(upstream);
    env = {
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      DATABASE_URL: db.url,
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
    };
    [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await upstream?.stop();
    await db?.drop();
  });

  /** Concurrent requests alternating between the replicas; how many were answered. */
  async function burst(key: string, n: number): Promise<number> {
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => chat(i % 2 === 0 ? a : b, key, i % 4 === 1)),
    );
    for (const r of results.filter((x) => x !== 'ok')) {
      expect(r).toBeInstanceOf(OpenAI.RateLimitError);
      expect(r.error.code).toBe('insufficient_quota');
    }
    return results.filter((r) => r === 'ok').length;
  }

  async function ledger(column: 'key_id' | 'team', id: string, rows: number) {
    return (
      await eventually(
        async () => {
          const t = await ledgerTotal(a, column, id);
          return t.rows >= rows ? t : undefined;
        },
        5000,
        `${rows} ledger rows`,
      )
    ).value;
  }

  it('admits across both replicas only what the key budget covers', async () => {
    const { id, key } = await createKey(a, {
      name: 'two-replicas',
      budget: { amount_usd: BUDGET_USD, period: 'month' },
    });
    expect(await burst(key, 24)).toBe(ANSWERS);
    const total = await ledger('key_id', id, 24);
    expect(total.cost).toBe(ANSWER_PICO * BigInt(ANSWERS));
    expect(total.cost).toBeLessThanOrEqual(50_000_000_000n);
    const counter = await counterOf(a, 'key', id);
    expect(counter).toMatchObject({ spent: total.cost, reserved: 0n, reservations: 0 });
    // Later requests on either replica are refused too: the counter is shared, not cached.
    expect(await burst(key, 4)).toBe(0);
  }, 30_000);

  it('settles a stream cut by a replica shutting down before that replica lets go of the database', async () => {
    const c = await startGateway({ ...env, SHUTDOWN_TIMEOUT_MS: '300' });
    const { id, key } = await createKey(a, {
      name: 'drained',
      budget: { amount_usd: 1, period: 'day' },
    });
    const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-gpt' };
    upstream.on('/v1/chat/completions', () => ({
      sse: [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }],
      after: 'hold',
    }));
    try {
      const stream = await new OpenAI({
        baseURL: c.baseURL,
        apiKey: key,
        maxRetries: 0,
      }).chat.completions.create({
        model: 'test-gpt',
        max_tokens: 1000,
        stream: true,
        messages: [
          { role: 'system', content: 'You are a test double.' },
          { role: 'user', content: 'Hi' },
        ],
      });
      const reading = (async () => {
        for await (const _ of stream) {
          // until the replica cuts it
        }
      })().catch(() => undefined);
      expect((await counterOf(a, 'key', id)).reservations).toBe(1);
      await c.close();
      await reading;
    } finally {
      answerWithFullOutput(upstream);
      await c.close();
    }
    // Replica C is gone: what it left behind is read through replica A.
    const counter = await counterOf(a, 'key', id);
    expect(counter).toMatchObject({ reserved: 0n, reservations: 0 });
    const row = await ledger('key_id', id, 1);
    expect(counter.spent).toBe(row.cost);
  }, 30_000);

  it('admits across both replicas only what the team budget covers, for all its keys', async () => {
    // Set on replica A; replica B learns it through the notification.
    expect(
      (await admin(a, 'PUT', '/teams/replicated/budget', { amount_usd: 0.03, period: 'day' }))
        .status,
    ).toBe(200);
    const one = await createKey(a, { name: 't-one', owner: 'replicated' });
    const two = await createKey(b, { name: 't-two', owner: 'replicated' });
    await eventually(
      async () => {
        const res = await admin(b, 'GET', '/teams/replicated/budget');
        return res.body.budget !== null ? true : undefined;
      },
      1000,
      'replica B to know the team budget',
    );
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        chat(i % 2 === 0 ? a : b, i % 3 === 0 ? one.key : two.key, i % 4 === 1),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(2);
    const total = await ledger('team', 'replicated', 16);
    expect(total.cost).toBe(ANSWER_PICO * 2n);
  }, 30_000);
});
