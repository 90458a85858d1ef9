import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MessagesController } from '../src/formats/messages/messages.controller';
import { ResponsesController } from '../src/formats/responses/responses.controller';
import { requestLimitsOf } from '../src/limits/request-limits.guard';
import { RedisRateLimitStore } from '../src/limits/rate/redis.store';
import type { BucketSpec } from '../src/limits/rate/rate-limit.store';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';
import {
  REDIS_URL,
  RedisProxy,
  deleteKeys,
  describeWithRedis,
  uniquePrefix,
} from './support/redis';
import { post as httpPost } from './support/http';

const CATALOG = testCatalog('http://127.0.0.1:9');
const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };
const CHAT_BODY: OpenAI.ChatCompletionCreateParamsNonStreaming = {
  model: 'local-echo-gpt',
  messages: [SYSTEM, { role: 'user', content: 'hello' }],
};
const RUN = uniquePrefix('limits');

function post(
  gw: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return httpPost(gw.origin, path, body, headers);
}

const chat = (gw: TestGateway, body: unknown = CHAT_BODY): Promise<Response> =>
  post(gw, '/v1/chat/completions', body);

/** Boots `count` gateways sharing one Redis namespace (the replicas of one deployment). */
async function replicas(
  count: number,
  name: string,
  env: Record<string, string>,
): Promise<TestGateway[]> {
  const gateways: TestGateway[] = [];
  for (let i = 0; i < count; i++) {
    gateways.push(
      await startGateway({
        CATALOG_PATH: CATALOG,
        REDIS_URL,
        REDIS_KEY_PREFIX: `${RUN}${name}:`,
        LOG_LEVEL: 'warn',
        ...env,
      }),
    );
  }
  return gateways;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeWithRedis('rate limits shared through Redis', () => {
  const open: TestGateway[] = [];
  const boot = async (
    count: number,
    name: string,
    env: Record<string, string>,
  ): Promise<TestGateway[]> => {
    const gws = await replicas(count, name, env);
    open.push(...gws);
    return gws;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((gw) => gw.close()));
  });
  afterAll(() => deleteKeys(RUN));

  it('two gateway replicas share one requests-per-minute limit exactly', async () => {
    const [a, b] = await boot(2, 'share', { RATE_LIMIT_REQUESTS_PER_MINUTE: '5' });
    const seen: [number, string | null][] = [];
    for (let i = 0; i < 8; i++) {
      const res = await chat(i % 2 === 0 ? a : b);
      seen.push([res.status, res.headers.get('x-ratelimit-remaining-requests')]);
      await res.arrayBuffer();
    }
    expect(seen).toEqual([
      [200, '4'],
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
      [429, '0'],
      [429, '0'],
    ]);
  });

  it('a concurrent burst across both replicas does not overshoot the limit', async () => {
    const [a, b] = await boot(2, 'burst', { RATE_LIMIT_REQUESTS_PER_MINUTE: '20' });
    const statuses = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const res = await chat(i % 2 === 0 ? a : b);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
  });

  it('the store admits exactly capacity under 400 parallel checks from two clients', async () => {
    const stores = [0, 1].map(
      () =>
        new RedisRateLimitStore({
          url: REDIS_URL,
          commandTimeoutMs: 2000,
          onError: () => undefined,
        }),
    );
    try {
      await Promise.all(stores.map((s) => s.ready()));
      const spec: BucketSpec = {
        kind: 'bucket',
        key: `${RUN}store:{k}:tokens`,
        capacity: 1000,
        windowMs: 600_000,
        cost: 7,
      };
      const results = await Promise.all(
        Array.from({ length: 400 }, (_, i) => stores[i % 2].acquire([spec])),
      );
      // 1000 / 7 = 142 requests fit; refill over the run is far below one request's cost.
      expect(results.filter((r) => r.allowed)).toHaveLength(142);
      expect(Math.min(...results.map((r) => r.dims[0].remaining))).toBeGreaterThanOrEqual(0);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a stock @nestjs/throttler ThrottlerGuard counts in the shared Redis store', async () => {
    const stores = [0, 1].map(
      () =>
        new RedisRateLimitStore({
          url: REDIS_URL,
          commandTimeoutMs: 2000,
          onError: () => undefined,
        }),
    );
    try {
      const guards = stores.map(
        (store) =>
          new ThrottlerGuard(
            {
              throttlers: [{ name: 'default', ttl: 60_000, limit: 3 }],
              getTracker: () => `${RUN}client`,
            },
            store,
            new Reflector(),
          ),
      );
      const context = {
        getHandler: () => function handler() {},
        getClass: () => class Controller {},
        switchToHttp: () => ({
          getRequest: () => ({ headers: {} }),
          getResponse: () => ({ header: () => undefined }),
        }),
      } as unknown as ExecutionContext;
      await Promise.all([...guards.map((g) => g.onModuleInit()), ...stores.map((s) => s.ready())]);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          guards[i % 2].canActivate(context).then(
            () => 'ok',
            () => 'limited',
          ),
        ),
      );
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('tokens per minute are shared, and corrected with the real usage on every replica', async () => {
    const [a, b] = await boot(2, 'tokens', { RATE_LIMIT_TOKENS_PER_MINUTE: '5000' });
    const body = { ...CHAT_BODY, max_tokens: 1000 };
    const startedAt = Date.now();
    const first = await chat(a, body);
    const completion = (await first.json()) as OpenAI.ChatCompletion;
    const reserved = 5000 - Number(first.headers.get('x-ratelimit-remaining-tokens'));
    expect(reserved).toBeGreaterThan(1000);
    const used = completion.usage!.total_tokens;
    // The correction is written when the response closes; replica B then sees it.
    await eventually(async () => {
      const probe = await chat(b, { ...CHAT_BODY, max_tokens: 1 });
      const remaining = Number(probe.headers.get('x-ratelimit-remaining-tokens'));
      await probe.arrayBuffer();
      return remaining > 5000 - reserved;
    });
    const next = await chat(b, body);
    await next.arrayBuffer();
    const remaining = Number(next.headers.get('x-ratelimit-remaining-tokens'));
    // Reserved again for this request; what the first one really used stays charged, less
    // what the bucket refilled meanwhile (5000 a minute, continuously: more on a slow machine).
    const refilled = Math.ceil((5000 * (Date.now() - startedAt)) / 60_000);
    expect(remaining).toBeLessThanOrEqual(5000 - used - reserved + refilled);
    expect(remaining).toBeGreaterThan(5000 - 2 * reserved);
  });

  it('limits concurrent streams across replicas and frees the slot when a stream ends', async () => {
    const [a, b] = await boot(2, 'streams', {
      RATE_LIMIT_MAX_CONCURRENT_STREAMS: '1',
      LOCAL_MODEL_TOKEN_DELAY_MS: '40',
    });
    const streamBody = {
      ...CHAT_BODY,
      stream: true,
      messages: [SYSTEM, { role: 'user', content: 'one two three four five' }],
    };
    const first = await chat(a, streamBody);
    expect(first.status).toBe(200);
    const second = await chat(b, streamBody);
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { message: string } }).error.message).toContain(
      'concurrent streams',
    );
    const nonStreamed = await chat(b);
    expect(nonStreamed.status).toBe(200);
    await nonStreamed.arrayBuffer();
    expect(await first.text()).toContain('[DONE]');
    await eventually(async () => {
      const again = await chat(b, streamBody);
      const ok = again.status === 200;
      await again.arrayBuffer();
      return ok;
    });
  });

  it('answers 429 on chat completions in the OpenAI envelope with retry-after and limit headers', async () => {
    const [gw] = await boot(1, 'envelope', {
      RATE_LIMIT_REQUESTS_PER_MINUTE: '1',
      RATE_LIMIT_TOKENS_PER_MINUTE: '100000',
    });
    await (await chat(gw)).arrayBuffer();
    const res = await chat(gw);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d+)?s|1m0s)$/);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      error: {
        message: 'Rate limit reached for requests per minute: limit 1. Please try again in 1m0s.',
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
  });

  it('the openai SDK gets a RateLimitError, and its retry waits for retry-after', async () => {
    const [gw] = await boot(1, 'sdk', { RATE_LIMIT_REQUESTS_PER_MINUTE: '60' });
    // Use up the bucket (60, refilling one per second) until it refuses.
    let refused = false;
    while (!refused) {
      const statuses = await Promise.all(
        Array.from({ length: 30 }, () =>
          chat(gw).then(async (r) => (await r.arrayBuffer(), r.status)),
        ),
      );
      refused = statuses.includes(429);
    }
    const noRetry = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const err = await noRetry.chat.completions.create(CHAT_BODY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      type: 'rate_limit_error',
    });
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe(
      '1',
    );

    const attempts: number[] = [];
    const client = new OpenAI({
      baseURL: gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 1,
      fetch: (url, init) => {
        attempts.push(Date.now());
        return fetch(url, init);
      },
    });
    const completion = await client.chat.completions.create(CHAT_BODY);
    expect(completion.choices[0].message.content).toBe('Echo: hello');
    expect(attempts).toHaveLength(2);
    expect(attempts[1] - attempts[0]).toBeGreaterThanOrEqual(950);
  });

  const messagesWired = requestLimitsOf(MessagesController.prototype.create) !== undefined;
  (messagesWired ? it : it.skip)(
    'the Anthropic SDK gets a RateLimitError with Anthropic headers on /v1/messages',
    async () => {
      const [gw] = await boot(1, 'anthropic', { RATE_LIMIT_REQUESTS_PER_MINUTE: '1' });
      const client = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
      const params = {
        model: 'local-echo-claude',
        max_tokens: 100,
        system: 'You are a test double.',
        messages: [{ role: 'user' as const, content: 'hello' }],
      };
      const ok = await client.messages.create(params).withResponse();
      expect(ok.response.headers.get('anthropic-ratelimit-requests-limit')).toBe('1');
      expect(ok.response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
      expect(ok.response.headers.get('anthropic-ratelimit-requests-reset')).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      );
      const err = await client.messages.create(params).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.RateLimitError);
      expect(err).toMatchObject({ status: 429 });
      const raw = await post(gw, '/v1/messages', params, { 'anthropic-version': '2023-06-01' });
      expect(raw.headers.get('retry-after')).toBe('60');
      expect(await raw.json()).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error' },
      });
    },
  );

  const responsesWired = requestLimitsOf(ResponsesController.prototype.create) !== undefined;
  (responsesWired ? it : it.skip)(
    'answers 429 on /v1/responses in the OpenAI envelope with OpenAI headers',
    async () => {
      const [gw] = await boot(1, 'responses', { RATE_LIMIT_REQUESTS_PER_MINUTE: '1' });
      const body = { model: 'local-echo-gpt', instructions: 'Be brief.', input: 'hello' };
      await (await post(gw, '/v1/responses', body)).arrayBuffer();
      const res = await post(gw, '/v1/responses', body);
      expect(res.status).toBe(429);
      expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(await res.json()).toMatchObject({
        error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' },
      });
    },
  );

  describe('when Redis stops mid-test', () => {
    const proxy = new RedisProxy();
    afterEach(() => proxy.stop());

    it('fails open (and counts it) or closed (503) as configured, without hanging, then recovers', async () => {
      await proxy.start();
      const common = { REDIS_URL: proxy.url, RATE_LIMIT_REQUESTS_PER_MINUTE: '2' };
      const [failOpen] = await boot(1, 'outage', { ...common, RATE_LIMIT_FAIL_MODE: 'open' });
      const [failClosed] = await boot(1, 'outage', { ...common, RATE_LIMIT_FAIL_MODE: 'closed' });
      const statuses = [];
      for (const gw of [failOpen, failClosed, failOpen]) {
        const res = await chat(gw);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 429]);

      const port = proxy.port;
      await proxy.stop();
      let started = Date.now();
      const whileDownOpen = await chat(failOpen);
      expect(whileDownOpen.status).toBe(200);
      expect(whileDownOpen.headers.get('x-ratelimit-limit-requests')).toBeNull();
      await whileDownOpen.arrayBuffer();
      const whileDownClosed = await chat(failClosed);
      expect(Date.now() - started).toBeLessThan(1500);
      expect(whileDownClosed.status).toBe(503);
      expect(await whileDownClosed.json()).toEqual({
        error: {
          message:
            'Rate limits cannot be checked right now, so the request was not sent. Please retry shortly.',
          type: 'server_error',
          param: null,
          code: 'rate_limiter_unavailable',
        },
      });
      const health = (await (await fetch(`${failOpen.origin}/health/limits`)).json()) as Record<
        string,
        unknown
      >;
      expect(health).toMatchObject({ storage: 'redis', failMode: 'open' });
      expect(health.failedOpen).toBeGreaterThanOrEqual(1);
      // Nest's logger is process-wide: the warning lands in the last booted gateway's sink.
      expect([...failOpen.rawLogs, ...failClosed.rawLogs].join('')).toContain(
        'Rate-limit storage unavailable',
      );

      // Redis comes back on the same address: the counts it kept apply again.
      await proxy.start(port);
      started = Date.now();
      await eventually(async () => {
        const res = await chat(failClosed);
        await res.arrayBuffer();
        return res.status === 429;
      });
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('a Redis that stops answering costs at most the command timeout', async () => {
      await proxy.start();
      const env = {
        REDIS_URL: proxy.url,
        RATE_LIMIT_REQUESTS_PER_MINUTE: '100',
        REDIS_COMMAND_TIMEOUT_MS: '200',
      };
      const [failOpen] = await boot(1, 'hang', { ...env, RATE_LIMIT_FAIL_MODE: 'open' });
      const [failClosed] = await boot(1, 'hang', { ...env, RATE_LIMIT_FAIL_MODE: 'closed' });
      proxy.hang();
      const started = Date.now();
      const [a, b] = await Promise.all([chat(failOpen), chat(failClosed)]);
      expect(Date.now() - started).toBeLessThan(1000);
      expect([a.status, b.status]).toEqual([200, 503]);
      await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
    });

    it('a gateway whose Redis is down at boot still starts and applies its fail mode', async () => {
      await proxy.start();
      const closedPort = proxy.port;
      await proxy.stop();
      const started = Date.now();
      const [failClosed] = await boot(1, 'down', {
        REDIS_URL: `redis://127.0.0.1:${closedPort}`,
        RATE_LIMIT_REQUESTS_PER_MINUTE: '1',
        RATE_LIMIT_FAIL_MODE: 'closed',
      });
      expect(Date.now() - started).toBeLessThan(5000);
      const res = await chat(failClosed);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      await res.arrayBuffer();
    });
  });
});
