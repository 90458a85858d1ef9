import { sql } from 'kysely';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  ANSWER_PICO,
  MAX_TOKENS,
  SYSTEM,
  answerWithFullOutput,
  chat,
  counterOf,
  databaseOf,
  ledgerTotal,
} from './support/budgets';
import { BUDGET_GATE } from '../src/limits/budget-gate';
import type { ReservingBudgetGate } from '../src/usage/budget.gate';
import { consoleSession } from './support/console-session';
import { chatCompletion } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, writeCatalog, type TestGateway } from './support/gateway';
import { ADMIN_TOKEN, admin, createKey, eventually, pricedCatalog } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

const SESSION_SECRET = 'budgets-session-secret-0123456789abc';
/** Four answers fit in $0.05 (each reserves about $0.01003 and costs $0.0100125); five do not. */
const EDGE_BUDGET_USD = 0.05;
const EDGE_ANSWERS = 4;

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
}

/** Waits until no reservation of the key or team is left and returns its counter. */
function settled(gw: TestGateway, scope: 'key' | 'team', id: string) {
  return eventually(
    async () => {
      const c = await counterOf(gw, scope, id);
      return c.reservations === 0 && c.reserved === 0n ? c : undefined;
    },
    5000,
    `the reservations of ${scope} ${id} to settle`,
  ).then((r) => r.value);
}

/** The ledger's rows for the key, once `rows` have been written. */
async function ledgerOf(gw: TestGateway, column: 'key_id' | 'team', id: string, rows: number) {
  return (
    await eventually(
      async () => {
        const t = await ledgerTotal(gw, column, id);
        return t.rows >= rows ? t : undefined;
      },
      5000,
      `${rows} ledger rows of ${id}`,
    )
  ).value;
}

function budgetSuite(backend: () => Promise<StoreBackend>): void {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const store = await backend();
    drop = store.drop;
    upstream = await new FakeUpstream().start();
    answerWithFullOutput(upstream);
    gw = await startGateway({
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      CONSOLE_SESSION_SECRET: SESSION_SECRET,
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...store.env,
    });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
    await drop?.();
  });

  beforeEach(() => answerWithFullOutput(upstream));

  it('admits no more concurrent requests than the budget covers: the ledger never exceeds it', async () => {
    const { id, key } = await createKey(gw, {
      name: 'edge',
      budget: { amount_usd: EDGE_BUDGET_USD, period: 'day' },
    });
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => chat(gw, key, i % 2 === 1)),
    );
    const ok = results.filter((r) => r === 'ok').length;
    const refused = results.filter((r) => r !== 'ok');
    expect(ok).toBe(EDGE_ANSWERS);
    for (const err of refused) {
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.error.code).toBe('insufficient_quota');
    }
    const ledger = await ledgerOf(gw, 'key_id', id, 24);
    expect(ledger.cost).toBe(ANSWER_PICO * BigInt(EDGE_ANSWERS));
    expect(ledger.cost).toBeLessThanOrEqual(BigInt(EDGE_BUDGET_USD * 1e6) * 1_000_000n);
    // Every reservation settled to the ledger's cost: the counter and the ledger agree.
    const counter = await settled(gw, 'key', id);
    expect(counter.spent).toBe(ledger.cost);
  }, 30_000);

  it('refuses in each endpoint’s own envelope, saying by how much the worst case misses', async () => {
    const { key } = await createKey(gw, {
      name: 'tiny',
      budget: { amount_usd: 0.001, period: 'month' },
    });
    const err = await rejection(
      new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 }).chat.completions.create({
        model: 'test-gpt',
        max_tokens: MAX_TOKENS,
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error.code).toBe('insufficient_quota');
    expect(err.error.message).toMatch(
      /^This API key cannot cover this request: its worst-case cost .* is \$0\.010\d+, and \$0\.001 is left of the budget of \$0\.001 per month \(\$0 used, \$0 reserved by requests in progress\), \$0\.009\d+ short\..* It resets at \d{4}-\d\d-01T00:00:00Z\.$/,
    );
    expect(err.headers.get('x-should-retry')).toBe('false');
    const responsesErr = await rejection(
      new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 }).responses.create({
        model: 'test-gpt',
        max_output_tokens: MAX_TOKENS,
        instructions: 'Be brief.',
        input: 'Hi',
      }),
    );
    expect(responsesErr).toBeInstanceOf(OpenAI.RateLimitError);
    expect(responsesErr.error.code).toBe('insufficient_quota');
    const messagesErr = await rejection(
      new Anthropic({ baseURL: gw.origin, apiKey: key, maxRetries: 0 }).messages.create({
        model: 'test-claude',
        max_tokens: MAX_TOKENS,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(messagesErr).toBeInstanceOf(Anthropic.RateLimitError);
    expect(messagesErr.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(messagesErr.error.error.message).toMatch(/cannot cover this request/);
    // A smaller output cap fits: $0.001 covers 50 output tokens and the prompt.
    const small = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: key,
      maxRetries: 0,
    }).chat.completions.create({
      model: 'test-gpt',
      max_tokens: 50,
      messages: [SYSTEM, { role: 'user', content: 'Hi' }],
    });
    expect(small.choices[0].message.content).toBe('ok');
  });

  it('reserves the whole context window for a prompt the gateway cannot count (web search)', async () => {
    const { key } = await createKey(gw, {
      name: 'searcher',
      budget: { amount_usd: 0.1, period: 'day' },
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });
    const body = {
      model: 'test-gpt',
      max_tokens: 10,
      messages: [SYSTEM, { role: 'user' as const, content: 'Hi' }],
    };
    expect((await client.chat.completions.create(body)).choices[0].message.content).toBe('ok');
    // 128,000 prompt tokens at $1.25 per million: $0.16 does not fit in what is left of $0.1.
    const err = await rejection(
      client.chat.completions.create({ ...body, web_search_options: {} } as typeof body),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error.message).toMatch(/worst-case cost .* is \$0\.1601/);
  });

  it('refuses background responses to a budgeted key (their cost comes after the reservation closes)', async () => {
    const queued = {
      id: 'resp_bg_1',
      object: 'response',
      created_at: 1,
      status: 'queued',
      background: true,
      model: 'upstream-gpt',
      output: [],
      usage: null,
    };
    upstream.on('/v1/responses', () => ({ json: queued }));
    const body = {
      model: 'test-gpt',
      instructions: SYSTEM.content,
      input: 'Hi',
      background: true,
      max_output_tokens: 10,
    };
    const budgeted = await createKey(gw, {
      name: 'background-budgeted',
      budget: { amount_usd: 1, period: 'day' },
    });
    const before = upstream.requests.length;
    const err = await rejection(
      new OpenAI({ baseURL: gw.baseURL, apiKey: budgeted.key, maxRetries: 0 }).responses.create(
        body,
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'background',
      code: 'background_not_allowed_with_budget',
    });
    expect(upstream.requests.length).toBe(before);
    expect(await counterOf(gw, 'key', budgeted.id)).toMatchObject({ reservations: 0 });
    // Without a budget, background works as it always did.
    const free = await createKey(gw, { name: 'background-free' });
    const made = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: free.key,
      maxRetries: 0,
    }).responses.create(body);
    expect(made).toMatchObject({ id: 'resp_bg_1', status: 'queued' });
    expect(upstream.last().body).toMatchObject({ background: true });
  });

  it('settles the reservation to nothing when the upstream fails', async () => {
    const { id, key } = await createKey(gw, {
      name: 'failing',
      budget: { amount_usd: 1, period: 'day' },
    });
    upstream.on('/v1/chat/completions', () => ({
      status: 500,
      json: { error: { message: 'boom', type: 'server_error' } },
    }));
    const err = await chat(gw, key);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    const counter = await settled(gw, 'key', id);
    expect(counter.spent).toBe(0n);
  });

  it('settles a stream the client leaves to the ledger’s estimated cost, holding nothing after', async () => {
    const { id, key } = await createKey(gw, {
      name: 'leaver',
      budget: { amount_usd: 1, period: 'day' },
    });
    const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-gpt' };
    upstream.on('/v1/chat/completions', () => ({
      sse: [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }],
      after: 'hold',
    }));
    const controller = new AbortController();
    const stream = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: key,
      maxRetries: 0,
    }).chat.completions.create(
      {
        model: 'test-gpt',
        max_tokens: MAX_TOKENS,
        stream: true,
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      },
      { signal: controller.signal },
    );
    const reserved = await counterOf(gw, 'key', id);
    expect(reserved.reservations).toBe(1);
    expect(reserved.reserved).toBeGreaterThan(0n);
    for await (const _ of stream) {
      controller.abort();
    }
    const ledger = await ledgerOf(gw, 'key_id', id, 1);
    const counter = await settled(gw, 'key', id);
    expect(ledger.cost).toBeGreaterThan(0n);
    expect(counter.spent).toBe(ledger.cost);
  });

  it('stops counting a reservation once it expires (its replica died before settling)', async () => {
    const { id, key } = await createKey(gw, {
      name: 'orphaned',
      budget: { amount_usd: 0.021, period: 'day' },
    });
    expect(await chat(gw, key)).toBe('ok');
    await settled(gw, 'key', id);
    const { db } = databaseOf(gw);
    const orphan = async (expiresInMs: number): Promise<void> => {
      // What a crashed replica leaves behind: a reservation and the counter's reserved sum.
      await sql`
        WITH c AS (
          UPDATE budget_counters SET reserved_pusd = reserved_pusd + 5000000000
          WHERE scope = 'key' AND scope_id = ${id} RETURNING period, period_start)
        INSERT INTO budget_reservations
          (id, scope, scope_id, period, period_start, amount_pusd, expires_at)
        SELECT gen_random_uuid(), 'key', ${id}, period, period_start, 5000000000,
          now() + ${expiresInMs} * interval '1 millisecond' FROM c`.execute(db);
    };
    await orphan(60_000);
    // $0.0100125 spent, $0.005 held by the live orphan: a $0.01003 worst case does not fit.
    const refused = await chat(gw, key);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused.error.message).toMatch(/\$0\.005 reserved by requests in progress/);
    await sql`UPDATE budget_reservations SET expires_at = now() - interval '1 second'
      WHERE scope_id = ${id}`.execute(db);
    expect(await chat(gw, key, true)).toBe('ok');
    const counter = await settled(gw, 'key', id);
    expect(counter.spent).toBe(ANSWER_PICO * 2n);
  });

  it('shares a team budget between the team’s keys, managed by admins and readable by members', async () => {
    const set = await admin(gw, 'PUT', '/teams/search/budget', {
      amount_usd: 0.03,
      period: 'month',
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      object: 'team_budget',
      team: 'search',
      budget: { amount_usd: 0.03, period: 'month' },
      spend: { period: 'month', spent_usd: 0, reserved_usd: 0, remaining_usd: 0.03 },
    });
    const a = await createKey(gw, { name: 'search-a', owner: 'search' });
    const b = await createKey(gw, {
      name: 'search-b',
      owner: 'search',
      budget: { amount_usd: 10, period: 'day' },
    });
    const other = await createKey(gw, { name: 'ads', owner: 'ads' });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => chat(gw, i % 2 === 0 ? a.key : b.key, i % 3 === 0)),
    );
    // Two answers ($0.020025) fit in $0.03; a third's worst case does not.
    expect(results.filter((r) => r === 'ok')).toHaveLength(2);
    const refusal = results.find((r) => r !== 'ok');
    expect(refusal.error.message).toMatch(/^The team 'search' of this API key /);
    const ledger = await ledgerOf(gw, 'team', 'search', 12);
    expect(ledger.cost).toBe(ANSWER_PICO * 2n);
    await settled(gw, 'team', 'search');
    // Another team's key is not limited by it.
    expect(await chat(gw, other.key)).toBe('ok');

    const read = await admin(gw, 'GET', '/teams/search/budget');
    expect(read.body.spend).toMatchObject({ spent_usd: 0.020025, reserved_usd: 0 });
    const session = await consoleSession(gw, { role: 'member', team: 'search' });
    const member = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${gw.origin}/admin/v1${path}`, {
        method,
        headers: {
          cookie: session.cookie,
          'x-csrf-token': session.csrf,
          'content-type': 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const mine = await member('/teams/search/budget');
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as any).spend.spent_usd).toBe(0.020025);
    expect((await member('/teams/ads/budget')).status).toBe(404);
    const listed = (await (await member('/teams')).json()) as any;
    expect(listed.data.map((t: any) => t.team)).toEqual(['search']);
    const put = await member('/teams/search/budget', 'PUT', { amount_usd: 100, period: 'month' });
    expect(put.status).toBe(403);
    expect(((await put.json()) as any).error.code).toBe('admin_only');
    // Raising it lets the team spend again, on every key at once.
    await admin(gw, 'PUT', '/teams/search/budget', { amount_usd: 1, period: 'month' });
    expect(await chat(gw, a.key)).toBe('ok');
    expect((await admin(gw, 'DELETE', '/teams/search/budget')).body.budget).toBeNull();
    const bad = await admin(gw, 'PUT', '/teams/search/budget', { amount_usd: -1, period: 'day' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('amount_usd');
    // Every change is on the audit record, before and after, by the admin token.
    const { value: audit } = await eventually(
      async () => {
        const page = await admin(gw, 'GET', '/audit?target=search&action=team.');
        return page.body.data.length >= 3 ? page.body.data : undefined;
      },
      5_000,
      'team budget audit entries',
    );
    expect(
      audit.slice(0, 3).map((e: any) => [e.action, e.actor.kind, e.change.budget?.to ?? null]),
    ).toEqual([
      ['team.budget_remove', 'admin_token', null],
      ['team.budget_update', 'admin_token', { amount_usd: 1, period: 'month' }],
      ['team.budget_update', 'admin_token', { amount_usd: 0.03, period: 'month' }],
    ]);
  }, 30_000);

  it('admits a model with no price while the budget has anything left, at no cost', async () => {
    const { id, key } = await createKey(gw, {
      name: 'free',
      budget: { amount_usd: 0.000001, period: 'day' },
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const done = await client.chat.completions.create({
        model: 'local-echo-gpt',
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      });
      expect(done.choices[0].message.content).toContain('Hi');
    }
    // A model the catalog does not know has no price either: the router refuses it (404),
    // not the budget.
    const unknown = await rejection(
      client.chat.completions.create({
        model: 'no-such-model',
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      }),
    );
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await settled(gw, 'key', id)).spent).toBe(0n);
    // A budget of zero has nothing left: even a free model is refused.
    await admin(gw, 'PATCH', `/keys/${id}`, { budget: { amount_usd: 0, period: 'day' } });
    const spent = await eventually(
      () =>
        client.chat.completions
          .create({ model: 'local-echo-gpt', messages: [SYSTEM, { role: 'user', content: 'x' }] })
          .then(
            () => undefined,
            (e: unknown) => e as any,
          ),
      2000,
      'the zero budget',
    );
    expect(spent.value.error.message).toMatch(/has spent its budget of \$0 per day \(\$0 used\)/);
  });
}

describeOnEachStore('Budgets as hard limits', 'budgets', budgetSuite);

/** A ttl short enough to pass several times while one request runs. */
const SHORT_TTL_MS = 1500;

function renewalSuite(backend: () => Promise<StoreBackend>): void {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const store = await backend();
    drop = store.drop;
    upstream = await new FakeUpstream().start();
    gw = await startGateway({
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      BUDGET_RESERVATION_TTL_MS: String(SHORT_TTL_MS),
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...store.env,
    });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
    await drop?.();
  });

  it('keeps renewing the reservation of a request that outlives the ttl; one nobody renews is swept', async () => {
    const { id, key } = await createKey(gw, {
      name: 'long-stream',
      budget: { amount_usd: 1, period: 'day' },
    });
    const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-gpt' };
    upstream.on('/v1/chat/completions', () => ({
      sse: [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }],
      after: 'hold',
    }));
    const controller = new AbortController();
    const stream = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: key,
      maxRetries: 0,
    }).chat.completions.create(
      {
        model: 'test-gpt',
        max_tokens: MAX_TOKENS,
        stream: true,
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      },
      { signal: controller.signal },
    );
    const held = await counterOf(gw, 'key', id);
    expect(held.reservations).toBe(1);
    // An orphan of the same key, as a replica that died leaves it: nobody renews it.
    const { db } = databaseOf(gw);
    await sql`
      WITH c AS (
        UPDATE budget_counters SET reserved_pusd = reserved_pusd + 5000000000
        WHERE scope = 'key' AND scope_id = ${id} RETURNING period, period_start)
      INSERT INTO budget_reservations
        (id, scope, scope_id, period, period_start, amount_pusd, expires_at)
      SELECT gen_random_uuid(), 'key', ${id}, period, period_start, 5000000000,
        now() + ${SHORT_TTL_MS} * interval '1 millisecond' FROM c`.execute(db);
    await new Promise((r) => setTimeout(r, SHORT_TTL_MS * 2.5));
    await gw.app.get<ReservingBudgetGate>(BUDGET_GATE).sweepExpired();
    // The running request still holds its worst case; the orphan is gone.
    const after = await counterOf(gw, 'key', id);
    expect(after.reservations).toBe(1);
    expect(after.reserved).toBe(held.reserved);
    controller.abort();
    await (async () => {
      for await (const _ of stream) {
        // the abort ends it
      }
    })().catch(() => undefined);
  }, 30_000);
}

describeOnEachStore('Budget reservations of running requests', 'budgets_renew', renewalSuite);

/** The answering model of the judge suite, and a judge model on an upstream of its own. */
function judgedCatalog(answers: string, judges: string): string {
  return writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: ${answers}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: judges, kind: openai-compatible, base_url: ${judges}/v1 }
models:
  - { id: test-gpt, upstream_id: upstream-gpt, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1.25, output: 10 } }
  - { id: judge-mini, provider: judges, family: openai, context_window: 32000, max_output_tokens: 4096, pricing: { input: 2, output: 8 } }
`);
}

const SHADOW_TOOL = {
  type: 'function' as const,
  function: {
    name: 'shadow_agent_validation',
    parameters: { type: 'object', properties: { model: { const: 'judge-mini' } } },
  },
};

function judgeSuite(backend: () => Promise<StoreBackend>): void {
  let answers: FakeUpstream;
  let judges: FakeUpstream;
  let gw: TestGateway;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const store = await backend();
    drop = store.drop;
    answers = await new FakeUpstream().start();
    judges = await new FakeUpstream().start();
    const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-gpt' };
    answers.on('/v1/chat/completions', () => ({
      sse: [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }],
      after: 'hold',
    }));
    judges.on('/v1/chat/completions', () => ({
      json: chatCompletion('judge-mini', '{"verdict":"allow","reason":"fine"}', {
        usage: { prompt_tokens: 900, completion_tokens: 12, total_tokens: 912 },
      }),
    }));
    gw = await startGateway({
      CATALOG_PATH: judgedCatalog(answers.url, judges.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      BUDGET_COUNT_PROTECTIONS: 'true',
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...store.env,
    });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
    await answers?.stop();
    await judges?.stop();
    await drop?.();
  });

  const body = (tools: object[]) => ({
    model: 'test-gpt',
    max_tokens: MAX_TOKENS,
    stream: true as const,
    messages: [SYSTEM, { role: 'user' as const, content: 'Hi' }],
    ...(tools.length > 0 ? { tools } : {}),
  });

  /** What a request of `key` holds reserved while its answer runs (then it is cut). */
  async function heldBy(key: string, id: string, tools: object[]): Promise<bigint> {
    const controller = new AbortController();
    const stream = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: key,
      maxRetries: 0,
    }).chat.completions.create(body(tools) as never, { signal: controller.signal });
    const held = await counterOf(gw, 'key', id);
    controller.abort();
    await (async () => {
      for await (const _ of stream as unknown as AsyncIterable<unknown>) {
        // the abort ends it
      }
    })().catch(() => undefined);
    await settled(gw, 'key', id);
    return held.reserved;
  }

  it('reserves the worst case of the protection judges when their calls count against the budget', async () => {
    const { id, key } = await createKey(gw, {
      name: 'judged',
      budget: { amount_usd: 5, period: 'day' },
    });
    const plain = await heldBy(key, id, []);
    const judged = await heldBy(key, id, [SHADOW_TOOL]);
    // One judge call: at most its whole 32,000-token window at $2 per million, and its
    // 300-token answer budget at $8 per million.
    const judgeMax = 32_000n * 2_000_000n + 300n * 8_000_000n;
    expect(judged - plain).toBeGreaterThanOrEqual(300n * 8_000_000n);
    expect(judged - plain).toBeLessThanOrEqual(judgeMax);

    // A budget that covers the answer's worst case but not the judge's refuses, upstream untouched.
    const between = Number((plain + (judged - plain) / 2n) / 1_000_000n) / 1e6;
    const tight = await createKey(gw, {
      name: 'judged-tight',
      budget: { amount_usd: between, period: 'day' },
    });
    const before = answers.requests.length;
    const err = await rejection(
      new OpenAI({ baseURL: gw.baseURL, apiKey: tight.key, maxRetries: 0 }).chat.completions.create(
        body([SHADOW_TOOL]) as never,
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error.code).toBe('insufficient_quota');
    expect(answers.requests.length).toBe(before);
    expect(judges.requests.length).toBe(0);
  }, 30_000);
}

describeOnEachStore('Budgets that count protection judges', 'budgets_judges', judgeSuite);
