import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FakeUpstream } from './support/fake-upstream';
import { chatCompletion, textStream } from './support/chat-fixtures';
import { anthropicMessage } from './support/anthropic-fixtures';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import {
  ADMIN_TOKEN,
  admin,
  CHAT_COST_USD,
  CHAT_USAGE,
  createKey,
  eventually,
  MESSAGE_COST_USD,
  MESSAGE_USAGE,
  pricedCatalog,
} from './support/key-store';
import { createTestDatabase, describeWithPostgres } from './support/postgres';
import { freshDataDir } from './support/pglite';
import { rejection } from './support/rejection';

const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };

interface Backend {
  env: Record<string, string>;
  teardown(): Promise<void>;
}

/** The same behaviour on every database the key store runs on. */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

function keyStoreSuite(setup: () => Promise<Backend>): void {
  let backend: Backend;
  let upstream: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await setup();
    upstream = await new FakeUpstream().start();
    upstream.on('/v1/chat/completions', () => ({
      json: chatCompletion('upstream-gpt', 'Hello there', { usage: CHAT_USAGE }),
    }));
    upstream.on('/v1/messages', () => ({
      json: anthropicMessage('upstream-claude', [{ type: 'text', text: 'Hi' }], {
        usage: MESSAGE_USAGE,
      }),
    }));
    gw = await startGateway({
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      METRICS_TOKEN: METRICS_TOKEN,
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...backend.env,
    });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
    await backend?.teardown();
  });

  const openai = (key: string): OpenAI =>
    new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });
  const anthropic = (key: string): Anthropic =>
    new Anthropic({ baseURL: gw.origin, apiKey: key, maxRetries: 0 });

  it('creates a key whose secret is shown once, and uses it with both SDKs at an exact cost', async () => {
    const { id, key, view } = await createKey(gw, { name: 'search-team', owner: 'search' });
    expect(id).toMatch(/^key_[0-9a-f]{24}$/);
    expect(key).toMatch(/^gw-[\w-]{43}$/);
    expect(view.key_hint).toBe(`${key.slice(0, 7)}…${key.slice(-4)}`);
    const fetched = await admin(gw, 'GET', `/keys/${id}`);
    expect(JSON.stringify(fetched.body)).not.toContain(key);
    expect(fetched.body).toMatchObject({
      id,
      name: 'search-team',
      owner: 'search',
      status: 'active',
    });

    const completion = await openai(key).chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Hi' }],
    });
    expect(completion.choices[0].message.content).toBe('Hello there');
    const message = await anthropic(key).messages.create({
      model: 'test-claude',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Hi' });

    const { value: usage } = await eventually(
      async () => {
        const res = await admin(gw, 'GET', `/usage?key_id=${id}&group_by=model`);
        return res.body.totals.requests === 2 ? res.body : undefined;
      },
      5000,
      'two ledger rows',
    );
    expect(usage.totals).toMatchObject({
      requests: 2,
      errors: 0,
      input_tokens: 1200 + 3500,
      cached_input_tokens: 200 + 2000,
      cache_write_tokens: 1000,
      output_tokens: 300 + 40,
      reasoning_tokens: 100,
      cost_usd: Number((CHAT_COST_USD + MESSAGE_COST_USD).toFixed(6)),
      estimated_cost_usd: 0,
    });
    expect(usage.data).toEqual([
      expect.objectContaining({ model: 'test-claude', requests: 1, cost_usd: MESSAGE_COST_USD }),
      expect.objectContaining({ model: 'test-gpt', requests: 1, cost_usd: CHAT_COST_USD }),
    ]);
    const rows = await admin(gw, 'GET', `/usage/requests?key_id=${id}&limit=1`);
    expect(rows.body.data).toHaveLength(1);
    expect(rows.body.has_more).toBe(true);
    expect(rows.body.data[0]).toMatchObject({
      endpoint: 'messages',
      model: 'test-claude',
      provider: 'fake-anthropic',
      status: 200,
      outcome: 'completed',
      cost_usd: MESSAGE_COST_USD,
    });
    const older = await admin(
      gw,
      'GET',
      `/usage/requests?key_id=${id}&after=${rows.body.next_cursor}`,
    );
    expect(older.body.data.map((r: any) => r.endpoint)).toEqual(['chat_completions']);
    // last_used_at comes with the ledger flush.
    expect((await admin(gw, 'GET', `/keys/${id}`)).body.last_used_at).not.toBeNull();
  });

  it('keeps the static keys working and lists them read-only', async () => {
    const models = await openai(TEST_KEY).models.list();
    expect(models.data.length).toBe(4);
    const list = await admin(gw, 'GET', '/keys');
    const statics = list.body.data.filter((k: any) => k.type === 'static');
    expect(statics).toHaveLength(1);
    const refused = await admin(gw, 'POST', `/keys/${statics[0].id}/revoke`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('static_key_read_only');
  });

  it('scopes a key to models and endpoints: 403 outside them, and /v1/models lists only its own', async () => {
    const { key, id } = await createKey(gw, {
      name: 'scoped',
      models: ['test-*'],
      // The older spelling is still accepted, and stored as the canonical name.
      endpoints: ['chat.completions'],
    });
    expect((await admin(gw, 'GET', `/keys/${id}`)).body.endpoints).toEqual(['chat_completions']);
    const forbiddenModel = await rejection(
      openai(key).chat.completions.create({
        model: 'local-echo-gpt',
        messages: [SYSTEM, { role: 'user', content: 'Hi' }],
      }),
    );
    expect(forbiddenModel).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(forbiddenModel.error).toMatchObject({
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
    const forbiddenEndpoint = await rejection(
      anthropic(key).messages.create({
        model: 'test-claude',
        max_tokens: 10,
        system: 'x',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(forbiddenEndpoint).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(forbiddenEndpoint.error.error.type).toBe('permission_error');
    const models = await openai(key).models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(['test-claude', 'test-gpt']);
    const hidden = await rejection(openai(key).models.retrieve('local-echo-gpt'));
    expect(hidden.status).toBe(404);
  });

  it('refuses an expired key with a 401 that says so', async () => {
    const { key } = await createKey(gw, {
      name: 'short-lived',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    await openai(key).models.list();
    await new Promise((r) => setTimeout(r, 1600));
    const err = await rejection(openai(key).models.list());
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.error).toMatchObject({
      code: 'api_key_expired',
      message: 'This API key has expired.',
    });
    expect(JSON.stringify(err.error)).not.toContain(key);
  });

  it('refuses a revoked key at once, and a rotated secret after its grace period', async () => {
    const { id, key } = await createKey(gw, { name: 'to-revoke' });
    await openai(key).models.list();
    const rotated = await admin(gw, 'POST', `/keys/${id}/rotate`, { grace_period_seconds: 0 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.key as string;
    expect(fresh).not.toBe(key);
    await eventually(
      () =>
        openai(key)
          .models.list()
          // Still accepted (the change is on its way): not yet; refused with 401: done.
          .then(
            () => undefined,
            (e: { status?: number }) => (e.status === 401 ? true : undefined),
          ),
      1000,
      'the old secret to stop working',
    );
    await openai(fresh).models.list();
    const revoked = await admin(gw, 'POST', `/keys/${id}/revoke`, { reason: 'leaked' });
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_reason: 'leaked' });
    const { value: err } = await eventually(
      async () => {
        const e = await openai(fresh)
          .models.list()
          .then(
            () => undefined,
            (x: unknown) => x as any,
          );
        return e;
      },
      1000,
      'the revocation',
    );
    expect(err.error).toMatchObject({
      code: 'api_key_revoked',
      message: 'This API key has been revoked.',
    });
    const anthropicErr = await rejection(
      anthropic(fresh).messages.create({
        model: 'test-claude',
        max_tokens: 10,
        system: 'x',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(anthropicErr).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(anthropicErr.error.error).toMatchObject({
      type: 'authentication_error',
      message: 'This API key has been revoked.',
    });
  });

  it('answers 429 insufficient_quota once the budget is spent, naming the budget and its reset', async () => {
    // One chat request costs $0.004275: the second one finds the $0.004 spent. The first
    // fits because its worst case (a short prompt and 300 output tokens) is about $0.003;
    // the fake upstream then reports more prompt tokens than the gateway sent.
    const { id, key } = await createKey(gw, {
      name: 'budgeted',
      budget: { amount_usd: 0.004, period: 'day' },
    });
    const client = openai(key);
    await client.chat.completions.create({
      model: 'test-gpt',
      max_tokens: 300,
      messages: [SYSTEM, { role: 'user', content: 'a' }],
    });
    const err = await rejection(
      client.chat.completions.create({
        model: 'test-gpt',
        max_tokens: 300,
        messages: [SYSTEM, { role: 'user', content: 'b' }],
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error.code).toBe('insufficient_quota');
    expect(err.error.message).toMatch(
      /budget of \$0\.004 per day \(\$0\.004275 used\)\. It resets at \d{4}-\d\d-\d\dT00:00:00Z/,
    );
    expect(err.headers.get('x-should-retry')).toBe('false');
    const anthropicErr = await rejection(
      anthropic(key).messages.create({
        model: 'test-claude',
        max_tokens: 5,
        system: 'x',
        messages: [{ role: 'user', content: 'c' }],
      }),
    );
    expect(anthropicErr).toBeInstanceOf(Anthropic.RateLimitError);
    expect(anthropicErr.error.error.type).toBe('rate_limit_error');
    const self: any = await (
      await fetch(`${gw.baseURL}/key`, { headers: { authorization: `Bearer ${key}` } })
    ).json();
    expect(self.data).toMatchObject({
      id,
      label: 'budgeted',
      usage: 0.004275,
      limit: 0.004,
      limit_remaining: 0,
      limit_reset: 'daily',
      budget: { amount_usd: 0.004, period: 'day', spent_usd: 0.004275, reserved_usd: 0 },
    });
    // Raising the budget lets the key spend again.
    const raised = await admin(gw, 'PATCH', `/keys/${id}`, {
      budget: { amount_usd: 1, period: 'day' },
    });
    expect(raised.status).toBe(200);
    await eventually(
      async () =>
        client.chat.completions
          .create({
            model: 'test-gpt',
            max_tokens: 300,
            messages: [SYSTEM, { role: 'user', content: 'd' }],
          })
          .then(
            () => true,
            () => undefined,
          ),
      1000,
      'the raised budget',
    );
  });

  it('records an estimated cost, marked, when the client leaves a stream before usage arrives', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: textStream('upstream-gpt', ['Hel', 'lo'], false),
      after: 'hold',
    }));
    const { id, key } = await createKey(gw, { name: 'leaver' });
    try {
      const controller = new AbortController();
      const stream = await openai(key).chat.completions.create(
        {
          model: 'test-gpt',
          max_tokens: 100,
          stream: true,
          messages: [SYSTEM, { role: 'user', content: 'Hi' }],
        },
        { signal: controller.signal },
      );
      for await (const _chunk of stream) {
        controller.abort();
      }
    } catch {
      // the abort
    } finally {
      upstream.on('/v1/chat/completions', () => ({
        json: chatCompletion('upstream-gpt', 'Hello there', { usage: CHAT_USAGE }),
      }));
    }
    const { value: row } = await eventually(
      async () => (await admin(gw, 'GET', `/usage/requests?key_id=${id}`)).body.data[0],
      5000,
      'the aborted request row',
    );
    expect(row).toMatchObject({
      outcome: 'client_aborted',
      cost_estimated: true,
      stream: true,
      output_tokens: 100,
    });
    expect(row.input_tokens).toBeGreaterThan(0);
    // 100 reserved output tokens at $10 per million, plus the prompt estimate at $1.25.
    expect(row.cost_usd).toBeCloseTo(0.001 + (row.input_tokens * 1.25) / 1e6, 9);
    expect(row.ttft_ms).not.toBeNull();
  });

  it('rejects bad admin input with a 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ name: 'x', colour: 'red' }, 'colour'],
      [{ name: 'x', budget: { amount_usd: -1, period: 'day' } }, 'budget.amount_usd'],
      [{ name: 'x', budget: { amount_usd: 1, period: 'week' } }, 'budget.period'],
      [{ name: 'x', models: ['gemini-*'] }, 'models[0]'],
      [{ name: 'x', models: ['test-gpt', 'nope'] }, 'models[1]'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'x', endpoints: ['embeddings'] }, 'endpoints[0]'],
      [{ name: 'x', limits: { requests_per_minute: -5 } }, 'limits.requests_per_minute'],
      [{ name: 'x', metadata: { team: 7 } }, 'metadata.team'],
      [{ owner: 'nobody' }, 'name'],
    ];
    for (const [body, param] of cases) {
      const res = await admin(gw, 'POST', '/keys', body);
      expect({ body, status: res.status, param: res.body.error.param }).toEqual({
        body,
        status: 400,
        param,
      });
    }
  });

  it('reports budget refusals, database health and ledger rows in /metrics', async () => {
    const res = await fetch(`${gw.origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await res.text();
    // The budget test above was refused at least once.
    expect(text).toMatch(
      /gateway_rate_limit_rejections_total\{[^}]*reason="insufficient_quota"[^}]*\} [1-9]/,
    );
    expect(text).toMatch(/^gateway_database_up 1$/m);
    expect(text).toMatch(/^gateway_usage_ledger_rows_total\{state="written"\} [1-9]/m);
    expect(text).toMatch(/^gateway_usage_ledger_rows_total\{state="dropped"\} 0$/m);
  });

  it('guards the admin API with its token', async () => {
    expect((await admin(gw, 'GET', '/keys', undefined, 'wrong-token')).status).toBe(401);
    expect((await admin(gw, 'GET', '/keys', undefined, TEST_KEY)).status).toBe(401);
    const bad = await fetch(`${gw.origin}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: '{"name":',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ type: 'invalid_request_error' });
  });
}

describe('key store on PGlite (no DATABASE_URL)', () => {
  it('keeps its keys and ledger across a restart in DATA_DIR', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-data-'));
    const env = {
      CATALOG_PATH: pricedCatalog('http://127.0.0.1:9'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      DATA_DIR: dataDir,
      USAGE_FLUSH_INTERVAL_MS: '60000', // only the shutdown flush writes the row
    };
    let gw = await startGateway(env);
    const { id, key } = await createKey(gw, { name: 'durable' });
    await new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 }).chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Hi' }],
    });
    await gw.close();
    gw = await startGateway(env);
    try {
      const models = await new OpenAI({
        baseURL: gw.baseURL,
        apiKey: key,
        maxRetries: 0,
      }).models.list();
      expect(models.data.length).toBeGreaterThan(0);
      const usage = await admin(gw, 'GET', `/usage?key_id=${id}`);
      expect(usage.body.totals.requests).toBe(1);
    } finally {
      await gw.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  keyStoreSuite(() =>
    Promise.resolve({
      env: { KEY_STORE: 'database', DATA_DIR: freshDataDir() },
      teardown: () => Promise.resolve(),
    }),
  );
});

describeWithPostgres('key store on PostgreSQL', () => {
  keyStoreSuite(async () => {
    const db = await createTestDatabase('keys');
    return { env: { KEY_STORE: 'database', DATABASE_URL: db.url }, teardown: () => db.drop() };
  });
});
