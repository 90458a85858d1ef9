/**
 * Cost of the rate-limit check (`npm run bench:limits`), in process, no HTTP:
 *
 *   1. the store decision alone: memory vs Redis, for a request with a requests-per-minute
 *      and a tokens-per-minute bucket (one Lua script per decision on Redis);
 *   2. the whole admission the route guard runs (extract facts from a ~1 KB chat body,
 *      request limits, token estimate, decision, headers), compared with the same
 *      admission when no rate limit is configured: the difference is what enabling rate
 *      limits adds to a request.
 *
 * Redis is REDIS_URL or redis://127.0.0.1:6379; its part is skipped when it does not
 * answer. Keys live under a unique prefix and are deleted at the end.
 */
import { EventEmitter } from 'node:events';
import type { ConfigService } from '@nestjs/config';
import type { ApiKeyService } from '../src/auth/api-key.service';
import { CatalogService } from '../src/catalog/catalog.service';
import type { CatalogModel } from '../src/catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../src/common/request-context';
import type { AllConfig, LimitsConfig } from '../src/config';
import { chatLimitFacts } from '../src/formats/chat-completions/chat.limits';
import { LimitsHealth } from '../src/limits/limits-health';
import { LimitsService } from '../src/limits/limits.service';
import { MemoryRateLimitStore } from '../src/limits/rate/memory.store';
import type { LimitSpec, RateLimitStore } from '../src/limits/rate/rate-limit.store';
import { RedisRateLimitStore } from '../src/limits/rate/redis.store';
import { counterFor } from '../src/limits/tokens/token-estimator';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const PREFIX = `gw-bench:${process.pid}:`;
const SCALE = Math.min(1, Math.max(0.01, Number(process.env.BENCH_SCALE ?? 1) || 1));
const N_MEMORY = Math.round(200_000 * SCALE);
const N_REDIS = Math.round(20_000 * SCALE);
const N_ADMIT = Math.round(20_000 * SCALE);

const MODEL = {
  id: 'bench-model',
  family: 'openai',
  contextWindow: 128_000,
  maxOutputTokens: 16_384,
  provider: { available: true },
} as CatalogModel;
const catalog = new CatalogService({ providers: new Map(), models: new Map([[MODEL.id, MODEL]]) });

/**
 * A ~1 KB chat body like the gateway benchmark's: a system prompt that every request
 * repeats (the tokenizer remembers it) and a user message that is new each time.
 */
const SYSTEM_PROMPT = 'You are a concise assistant. Answer in one short paragraph. '.repeat(5);
function body(i: number): unknown {
  return {
    model: MODEL.id,
    max_tokens: 256,
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      {
        role: 'user',
        content:
          `Request ${i}: summarise why rate limits must be shared across gateway replicas. `.repeat(
            8,
          ),
      },
    ],
  };
}

interface Stats {
  p50: number;
  p99: number;
  mean: number;
}

function stats(samplesNs: number[]): Stats {
  const sorted = [...samplesNs].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000;
  return {
    p50: at(0.5),
    p99: at(0.99),
    mean: sorted.reduce((s, v) => s + v, 0) / sorted.length / 1000,
  };
}

const fmt = (s: Stats): string =>
  `p50 ${s.p50.toFixed(2)} µs   p99 ${s.p99.toFixed(2)} µs   mean ${s.mean.toFixed(2)} µs`;

async function timeEach(n: number, op: (i: number) => unknown): Promise<Stats> {
  const samples: number[] = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = op(i);
    if (r instanceof Promise) {
      await r;
    }
    samples[i] = Number(process.hrtime.bigint() - t0);
  }
  return stats(samples);
}

async function throughput(
  n: number,
  concurrency: number,
  op: () => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        await op();
      }
    }),
  );
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

function specs(key: string): LimitSpec[] {
  // Huge capacities: the bench measures the decision, never a refusal.
  return [
    {
      kind: 'bucket',
      key: `${PREFIX}{${key}}:requests`,
      capacity: 1e12,
      windowMs: 60_000,
      cost: 1,
    },
    {
      kind: 'bucket',
      key: `${PREFIX}{${key}}:tokens`,
      capacity: 1e15,
      windowMs: 60_000,
      cost: 1500,
    },
  ];
}

/** `requests`: requests per minute only; `tokens`: requests and tokens per minute. */
function limitsService(
  store: RateLimitStore,
  limited: 'none' | 'requests' | 'tokens',
): LimitsService {
  const config: LimitsConfig = {
    defaults: {
      requestsPerMinute: limited === 'none' ? 0 : 1e12,
      tokensPerMinute: limited === 'tokens' ? 1e15 : 0,
      maxConcurrentStreams: 0,
    },
    defaultOutputTokens: 1024,
    failMode: 'open',
    redisKeyPrefix: PREFIX,
    redisCommandTimeoutMs: 1000,
    maxMessages: 2048,
    maxTools: 128,
    maxContentParts: 4096,
  };
  const keys = { info: () => undefined, anyLimit: () => false } as unknown as ApiKeyService;
  return new LimitsService(
    { get: () => config } as unknown as ConfigService<AllConfig, true>,
    catalog,
    keys,
    store,
    new LimitsHealth(),
  );
}

class Res extends EventEmitter {
  statusCode = 200;
  setHeader(): void {}
}

function admitOnce(service: LimitsService, i: number): true | Promise<true> {
  const req = {
    path: '/v1/chat/completions',
    body: body(i),
    ctx: { requestId: 'r', startedAt: 0n, keyId: `key${i % 8}` },
  };
  const res = new Res();
  const r = service.admit(
    chatLimitFacts(req.body),
    req as unknown as GatewayRequest,
    res as unknown as GatewayResponse,
  );
  // The response ends at once: the token correction runs, as it would after the answer.
  (req.ctx as { usage?: unknown }).usage = { inputTokens: 300, outputTokens: 100 };
  const close = (): void => void res.emit('close');
  return r instanceof Promise ? r.then(() => (close(), true)) : (close(), true);
}

async function redisAvailable(store: RedisRateLimitStore): Promise<boolean> {
  await store.ready();
  return store.client.status === 'ready';
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, BENCH_SCALE=${SCALE}`);
  counterFor('o200k_base'); // load the rank table before timing anything
  const results: Record<string, string> = {};

  const memory = new MemoryRateLimitStore();
  await timeEach(N_MEMORY / 10, (i) => memory.acquire(specs(`k${i % 8}`)));
  const memStore = await timeEach(N_MEMORY, (i) => memory.acquire(specs(`k${i % 8}`)));
  results['store decision, memory'] = fmt(memStore);

  const unlimited = limitsService(memory, 'none');
  const memRequests = limitsService(memory, 'requests');
  const memTokens = limitsService(memory, 'tokens');
  for (const service of [unlimited, memRequests, memTokens]) {
    await timeEach(N_ADMIT / 10, (i) => admitOnce(service, i));
  }
  const base = await timeEach(N_ADMIT, (i) => admitOnce(unlimited, i));
  const memAdmitRequests = await timeEach(N_ADMIT, (i) => admitOnce(memRequests, i));
  const memAdmit = await timeEach(N_ADMIT, (i) => admitOnce(memTokens, i));
  results['admission, no rate limits (request limits only)'] = fmt(base);
  results['admission, memory, requests/min'] = fmt(memAdmitRequests);
  results['admission, memory, requests + tokens/min'] = fmt(memAdmit);
  await memory.close();

  const redis = new RedisRateLimitStore({
    url: REDIS_URL,
    commandTimeoutMs: 1000,
    onError: () => undefined,
  });
  let redisStore: Stats | undefined;
  let redisAdmit: Stats | undefined;
  let redisAdmitRequests: Stats | undefined;
  if (await redisAvailable(redis)) {
    await timeEach(N_REDIS / 10, (i) => redis.acquire(specs(`k${i % 8}`)));
    redisStore = await timeEach(N_REDIS, (i) => redis.acquire(specs(`k${i % 8}`)));
    results['store decision, Redis (sequential)'] = fmt(redisStore);
    const ops = await throughput(N_REDIS, 32, () =>
      redis.acquire(specs(`k${Math.floor(Math.random() * 8)}`)),
    );
    results['store decisions, Redis, 32 in flight'] = `${Math.round(ops)} decisions/s`;
    const redisRequests = limitsService(redis, 'requests');
    const redisTokens = limitsService(redis, 'tokens');
    await timeEach(N_ADMIT / 10, (i) => admitOnce(redisRequests, i));
    await timeEach(N_ADMIT / 10, (i) => admitOnce(redisTokens, i));
    redisAdmitRequests = await timeEach(N_ADMIT, (i) => admitOnce(redisRequests, i));
    redisAdmit = await timeEach(N_ADMIT, (i) => admitOnce(redisTokens, i));
    results['admission, Redis, requests/min'] = fmt(redisAdmitRequests);
    results['admission, Redis, requests + tokens/min'] = fmt(redisAdmit);
    const keys: string[] = await redis.client.keys(`${PREFIX}*`);
    if (keys.length > 0) {
      await redis.client.del(...keys);
    }
  } else {
    results['Redis'] = `skipped: ${REDIS_URL} does not answer`;
  }
  await redis.close();

  const width = Math.max(...Object.keys(results).map((k) => k.length));
  console.log('');
  for (const [name, value] of Object.entries(results)) {
    console.log(`${name.padEnd(width)}  ${value}`);
  }
  console.log('');
  const added = (s: Stats): string => `${(s.p50 - base.p50).toFixed(1)} µs`;
  console.log(
    `added by rate limits (p50): memory ${added(memAdmitRequests)} (requests/min), ` +
      `${added(memAdmit)} (requests + tokens/min)`,
  );
  if (redisAdmit && redisAdmitRequests) {
    console.log(
      `added by rate limits (p50): Redis  ${added(redisAdmitRequests)} (requests/min), ` +
        `${added(redisAdmit)} (requests + tokens/min)`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
