import { Blackhole } from './support/blackhole';
import { FaultUpstream } from './support/fault-upstream';
import { startGateway, TEST_KEY, type TestGateway, writeCatalog } from './support/gateway';

/**
 * The edges of the resilience layer, end to end on loopback: per-provider connect
 * timeouts, one deadline across fallbacks, deployments' own limits, a held stream whose
 * head went out before an attempt served, listeners per request, and protection verdicts
 * of a retried request.
 */

const SYSTEM = 'You are a terse assistant.';
const FILTER = 'system_prompt_filter';
const SHADOW = 'shadow_agent_validation';

let a: FaultUpstream;
let b: FaultUpstream;
let hole: Blackhole;
let gw: TestGateway;

const MODEL =
  'family: openai, context_window: 128000, max_output_tokens: 1000, pricing: { input: 1, output: 2 }';
/** The same keys, for a model written as a block. */
const BLOCK = `family: openai
    context_window: 128000
    max_output_tokens: 1000
    pricing: { input: 1, output: 2 }`;

beforeAll(async () => {
  [a, b, hole] = await Promise.all([
    new FaultUpstream().start(),
    new FaultUpstream().start(),
    new Blackhole().start(),
  ]);
  const catalog = writeCatalog(`
providers:
  - { name: dep-a, kind: openai, base_url: ${a.url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: dep-b, kind: openai, base_url: ${b.url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: dep-hole, kind: openai, base_url: http://127.0.0.1:${hole.port}/v1, api_key_env: TEST_UPSTREAM_KEY, timeouts: { connect_ms: 300 } }
models:
  - { id: gpt-b, provider: dep-b, ${MODEL} }
  - { id: gpt-hole, provider: dep-hole, retry: { attempts: 1 }, fallbacks: [gpt-b], ${MODEL} }
  - { id: gpt-hole-pair, deployments: [{ provider: dep-hole, weight: 1 }, { provider: dep-b, weight: 0 }], ${MODEL} }
  - { id: gpt-dl, provider: dep-a, retry: { attempts: 1 }, timeouts: { first_byte_ms: 1000, total_ms: 2000 }, fallbacks: [gpt-dl-fb], ${MODEL} }
  - { id: gpt-dl-fb, provider: dep-b, retry: { attempts: 1 }, timeouts: { first_byte_ms: 8000, total_ms: 8000 }, ${MODEL} }
  - id: gpt-conc
    deployments:
      - { provider: dep-a, limits: { max_concurrent: 1 } }
      - { provider: dep-b, limits: { max_concurrent: 1 } }
    ${BLOCK}
  - id: gpt-rpm
    deployments:
      - { provider: dep-a, limits: { requests_per_minute: 2 } }
      - { provider: dep-b, limits: { requests_per_minute: 1 } }
    ${BLOCK}
  - id: gpt-tpm
    deployments:
      - { provider: dep-a, weight: 1, limits: { tokens_per_minute: 10 } }
      - { provider: dep-b, weight: 0 }
    ${BLOCK}
  - { id: gpt-held, deployments: [{ provider: dep-a, weight: 1 }, { provider: dep-b, weight: 0 }], timeouts: { first_byte_ms: 600 }, fallbacks: [gpt-b], ${MODEL} }
  - { id: gpt-many, provider: dep-a, retry: { attempts: 12, backoff_ms: 1, max_backoff_ms: 2 }, ${MODEL} }
`);
  gw = await startGateway({
    CATALOG_PATH: catalog,
    UPSTREAM_RETRY_ATTEMPTS: '2',
    UPSTREAM_RETRY_BACKOFF_MS: '5',
    UPSTREAM_RETRY_MAX_BACKOFF_MS: '10',
    // The environment's connect timeout is long: only the provider's own can cut a hung connect.
    UPSTREAM_CONNECT_TIMEOUT_MS: '30000',
    UPSTREAM_STREAM_HOLD_MS: '150',
    SSE_KEEPALIVE_MS: '100',
    UPSTREAM_EJECT_CONSECUTIVE_FAILURES: '100',
    // The shadow agent's judge (it answers no verdict: the judge errs, which is enough here).
    SHADOW_AGENT_MODEL: 'gpt-b',
  });
});

afterAll(async () => {
  await gw.close();
  await Promise.all([a.stop(), b.stop()]);
  hole.stop();
});

beforeEach(() => {
  for (const u of [a, b]) {
    u.fault = 'ok';
    u.script = [];
    u.requests.length = 0;
  }
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  ms: number;
}

function chat(
  model: string,
  stream: boolean,
  extra: object = {},
  signal?: AbortSignal,
): Promise<Answer> {
  return call('/v1/chat/completions', { authorization: `Bearer ${TEST_KEY}` }, signal, {
    model,
    stream,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'hi' },
    ],
    ...extra,
  });
}

function messages(model: string): Promise<Answer> {
  return call(
    '/v1/messages',
    { 'x-api-key': TEST_KEY, 'anthropic-version': '2023-06-01' },
    undefined,
    { model, max_tokens: 100, system: SYSTEM, messages: [{ role: 'user', content: 'hi' }] },
  );
}

async function call(
  path: string,
  auth: Record<string, string>,
  signal: AbortSignal | undefined,
  body: object,
): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${gw.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
    signal,
  });
  return {
    status: res.status,
    headers: res.headers,
    text: await res.text(),
    ms: Date.now() - started,
  };
}

function served(answer: Answer): [string | null, string | null, string | null] {
  return ['x-gateway-model', 'x-gateway-deployment', 'x-gateway-attempts'].map((h) =>
    answer.headers.get(h),
  ) as [string | null, string | null, string | null];
}

/** Polls `check` every 20 ms for up to `ms` (generous: a loaded machine is slow). */
async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error('the awaited state never came');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function inFlight(model: string): Promise<number> {
  const res = await fetch(`${gw.origin}/health/upstreams`);
  const body = (await res.json()) as { deployments: { model: string; in_flight: number }[] };
  return body.deployments.filter((d) => d.model === model).reduce((n, d) => n + d.in_flight, 0);
}

describe('connect timeouts per provider', () => {
  it('cuts a connect that never completes at the provider connect_ms and falls back', async () => {
    const answer = await chat('gpt-hole', false);
    expect([answer.status, answer.text]).toEqual([200, expect.stringContaining('Hello there')]);
    expect(served(answer)).toEqual(['gpt-b', 'dep-b', '2']);
    // One 300 ms connect timeout, not the environment's 30 s.
    expect(answer.ms).toBeGreaterThanOrEqual(290);
    expect(answer.ms).toBeLessThan(5000);
  });

  it('retries a hung connect on the next deployment', async () => {
    const answer = await chat('gpt-hole-pair', true);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('data: [DONE]');
    expect(answer.ms).toBeLessThan(5000);
    const log = gw.logs.filter((l) => l.msg === 'request').at(-1);
    expect(log).toMatchObject({ model: 'gpt-hole-pair', provider: 'dep-b', attempts: 2 });
  });
});

describe('one deadline per request', () => {
  it('gives a fallback only what is left of the request deadline', async () => {
    a.fault = 'hang';
    b.fault = 'hang';
    const answer = await chat('gpt-dl', false);
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'upstream_timeout' } });
    // The fallback was tried (after the first model's 1 s first-byte deadline) and cut at
    // the request's 2 s, not given its own 8 s.
    await waitFor(() => b.requests.length === 1);
    expect(served(answer)).toEqual(['gpt-dl-fb', 'dep-b', '2']);
    expect(answer.ms).toBeGreaterThanOrEqual(1900);
    expect(answer.ms).toBeLessThan(6000);
  });
});

describe("deployments' own limits", () => {
  it('skips a deployment at max_concurrent, and answers 429 only when every one is full', async () => {
    a.fault = 'hang';
    b.fault = 'hang';
    const held = new AbortController();
    const first = chat('gpt-conc', false, {}, held.signal).catch(() => undefined);
    await waitFor(() => a.requests.length + b.requests.length === 1);
    const second = chat('gpt-conc', false, {}, held.signal).catch(() => undefined);
    // The second request went to the other deployment.
    await waitFor(() => a.requests.length === 1 && b.requests.length === 1);
    const refused = await chat('gpt-conc', false);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.text)).toMatchObject({
      error: { type: 'rate_limit_error', code: 'deployments_at_capacity' },
    });
    expect(a.requests.length + b.requests.length).toBe(2);
    held.abort();
    await Promise.all([first, second]);
    await waitFor(async () => (await inFlight('gpt-conc')) === 0);
    a.fault = 'ok';
    b.fault = 'ok';
    expect((await chat('gpt-conc', false)).status).toBe(200);
  });

  it('counts requests per minute per deployment, in the endpoint envelope when all are spent', async () => {
    const deployments: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await chat('gpt-rpm', false);
      expect(answer.status).toBe(200);
      deployments.push(served(answer)[1]);
    }
    expect(deployments.sort()).toEqual(['dep-a', 'dep-a', 'dep-b']);
    const refused = await messages('gpt-rpm');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text)).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error' },
    });
    // The next request slot of dep-a (2 a minute) is about 30 s away.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(20);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect([a.requests.length, b.requests.length]).toEqual([2, 1]);
  });

  it('skips a deployment whose answers spent its tokens per minute', async () => {
    const first = await chat('gpt-tpm', false);
    expect(served(first)[1]).toBe('dep-a');
    // Its tokens count once the answer ended.
    await waitFor(async () => (await inFlight('gpt-tpm')) === 0);
    const second = await chat('gpt-tpm', false);
    expect([second.status, served(second)[1]]).toEqual([200, 'dep-b']);
  });
});

describe('a stream whose head went out before an attempt served', () => {
  it('names the requested model in its head and the serving one in an SSE comment and the log', async () => {
    // dep-a hangs past the hold (150 ms) to its first-byte deadline (600 ms); dep-b serves.
    a.fault = 'hang';
    const answer = await chat('gpt-held', true);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^: keepalive/);
    expect(served(answer)).toEqual(['gpt-held', null, null]);
    expect(answer.text).toContain(
      ': x-gateway-model: gpt-held\n: x-gateway-deployment: dep-b\n: x-gateway-attempts: 2\n\n',
    );
    expect(answer.text).toContain('data: [DONE]');
    const log = gw.logs.filter((l) => l.msg === 'request').at(-1);
    expect(log).toMatchObject({ model: 'gpt-held', provider: 'dep-b', attempts: 2 });
  });

  it('names a fallback that served in the comment', async () => {
    a.fault = 'hang';
    b.script = ['hang'];
    const answer = await chat('gpt-held', true);
    expect(answer.status).toBe(200);
    expect(served(answer)).toEqual(['gpt-held', null, null]);
    expect(answer.text).toContain(': x-gateway-model: gpt-b\n: x-gateway-deployment: dep-b\n');
  });
});

describe('listeners per request', () => {
  it('adds no listener to the response per attempt (twelve attempts, no warning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w);
    };
    process.on('warning', onWarning);
    const counts: number[] = [];
    const server = gw.app.getHttpServer();
    const onRequest = (_req: unknown, res: NodeJS.EventEmitter): void => {
      res.once('finish', () => counts.push(res.listenerCount('close')));
    };
    server.prependListener('request', onRequest);
    try {
      for (const stream of [false, true]) {
        for (const name of [undefined, FILTER, SHADOW]) {
          const extra =
            name === undefined
              ? {}
              : { tools: [{ type: 'function', function: { name, parameters: {} } }] };
          const once = await chat('gpt-many', stream, extra);
          a.script = Array.from({ length: 11 }, () => 'error_503' as const);
          const many = await chat('gpt-many', stream, extra);
          expect([once.status, many.status]).toEqual([200, 200]);
          // On a loaded machine twelve attempts may outlast the stream hold: the head then went
          // out first and the count travels in the SSE comment instead.
          const attempts =
            served(many)[2] ?? /^: x-gateway-attempts: (\d+)$/m.exec(many.text)?.[1] ?? null;
          expect(attempts).toBe('12');
        }
      }
    } finally {
      server.off('request', onRequest);
      process.off('warning', onWarning);
    }
    // Pairs of one attempt and twelve: the same listeners.
    expect(counts).toHaveLength(12);
    for (let i = 0; i < counts.length; i += 2) {
      expect(counts[i + 1]).toBe(counts[i]);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});

describe('protection verdicts of a retried request', () => {
  const protectedChat = (stream: boolean): Promise<Answer> =>
    chat('gpt-many', stream, {
      tools: [{ type: 'function', function: { name: FILTER, parameters: {} } }],
    });

  it('a stream: pending in the head and final at the end, never an error of a failed attempt', async () => {
    a.script = ['error_503'];
    const answer = await protectedChat(true);
    expect(answer.status).toBe(200);
    expect(served(answer)[2]).toBe('2');
    expect(answer.headers.get('x-gateway-protections')).toBe(`${FILTER}=pending`);
    expect(answer.text).toContain(`: x-gateway-protections: ${FILTER}=pass`);
    expect(answer.text).not.toContain(`${FILTER}=error`);
    const log = gw.logs.filter((l) => l.msg === 'request').at(-1);
    expect(log?.protections).toBe(`${FILTER}=pass`);
  });

  it('unstreamed, with a reset mid-answer retried: the verdict of the attempt that served', async () => {
    a.script = ['reset_mid_stream'];
    const answer = await protectedChat(false);
    expect([answer.status, served(answer)[2]]).toEqual([200, '2']);
    expect(answer.headers.get('x-gateway-protections')).toBe(`${FILTER}=pass`);
  });

  it('every attempt failed: settled as error once', async () => {
    a.fault = 'error_503';
    const answer = await protectedChat(false);
    expect(answer.status).toBe(502);
    expect(answer.headers.get('x-gateway-protections')).toBe(`${FILTER}=error`);
  });
});
