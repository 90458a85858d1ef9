/**
 * What metrics and tracing add to each request, in process (no HTTP): the hooks the
 * request-context middleware, the upstream client and the SSE writer call, timed per
 * request, with tracing off (the default) and on, against an empty loop.
 *
 * - `metrics_request_end`: MetricsService.requestEnded for a streamed chat request with
 *   usage, cost and a protection verdict (the most labels any request updates);
 * - `in_path_hooks`: the hooks that run before the response is over, so the only ones that
 *   can add latency (started, upstream dispatch and first byte, first event; includes
 *   building the fake request, measured alone as `fake_exchange_only`); the rest runs in
 *   the response's 'close' handler, after the client has the whole answer;
 * - `observer_request`: everything one upstream request pays with tracing off: started,
 *   upstream dispatch and first byte, first event, ended (which includes the above);
 * - `observer_request_traced`: the same with tracing on (spans are created and queued for
 *   a batch export to an address that refuses, so export cost is not in it);
 * - `prom_client_labels_uncached`: prom-client's own `labels().observe()` for comparison
 *   with the cached children MetricsService uses.
 *
 * `npm run bench:metrics`; BENCH_SCALE scales the iteration counts.
 */
import { EventEmitter } from 'node:events';
import { Histogram, Registry } from 'prom-client';
import type { CatalogService } from '../src/catalog/catalog.service';
import type { GatewayRequest, GatewayResponse } from '../src/common/request-context';
import { readObservabilityConfig } from '../src/config/observability.config';
import {
  LATENCY_BUCKETS,
  MetricsService,
  type RequestFacts,
} from '../src/observability/metrics/metrics.service';
import { markFirstEvent } from '../src/common/observed-request';
import { RequestObserver } from '../src/observability/request-observer';
import { TracingService } from '../src/observability/tracing/tracing.service';
import { round, summarize } from './stats';
import { CallAbort, linkUpstreamSignal, observedBySignal } from '../src/upstream/call-signal';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const BATCHES = Math.max(10, Math.round(200 * SCALE));
const PER_BATCH = 2_000;

/** Nanoseconds per call of `run`, one sample per batch of PER_BATCH calls. */
function measure(name: string, run: (i: number) => void): void {
  for (let i = 0; i < PER_BATCH * 5; i++) {
    run(i);
  }
  const samples: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PER_BATCH; i++) {
      run(i);
    }
    samples.push(Number(process.hrtime.bigint() - start) / PER_BATCH);
  }
  const s = summarize(samples, 1);
  console.log(
    `${name.padEnd(30)} ns/request  p50 ${String(s.p50).padStart(7)}  p90 ${String(s.p90).padStart(7)}  p99 ${String(s.p99).padStart(7)}`,
  );
}

const MODELS = ['gpt-a', 'gpt-b', 'claude-c', 'local-d'];
const facts = (i: number): RequestFacts => ({
  endpoint: '/v1/chat/completions',
  status: 200,
  outcome: 'success',
  model: MODELS[i % MODELS.length],
  provider: 'openai',
  stream: true,
  keyId: 'k1',
  durationSeconds: 0.8,
  overheadSeconds: 0.00021,
  upstreamFirstByteSeconds: 0.3,
  firstTokenSeconds: 0.31,
  usage: { inputTokens: 1200, outputTokens: 240, cachedInputTokens: 1000, reasoningTokens: 64 },
  costUsd: 0.0012,
  protections: 'prompt_injection=pass;score=0.02',
});

const catalog = {
  find: (id: string) => ({ id, upstreamId: id, pricing: { input: 1, output: 2 } }),
} as unknown as CatalogService;

function fakeExchange(i: number): { req: GatewayRequest; res: GatewayResponse } {
  const req = {
    method: 'POST',
    headers: {},
    baseUrl: '',
    route: { path: '/v1/chat/completions' },
    ctx: {
      requestId: `req_${i}`,
      startedAt: process.hrtime.bigint(),
      keyId: 'k1',
      model: MODELS[i % MODELS.length],
      provider: 'openai',
      stream: true,
      usage: { inputTokens: 1200, outputTokens: 240 },
    },
  } as unknown as GatewayRequest;
  const res = { statusCode: 200 } as unknown as GatewayResponse;
  return { req, res };
}

/** The hooks that run before the response is over (they add to its latency). */
// The upstream body exists anyway; not part of the cost.
const BODY = new EventEmitter();

function inPath(observer: RequestObserver, req: GatewayRequest): void {
  observer.started(req);
  // The call's abort object is made per request anyway; linking it is part of the cost.
  const call = new CallAbort();
  linkUpstreamSignal(call, req);
  const observed = observedBySignal(call);
  observed?.upstreamStarted('POST', 'http://127.0.0.1:9/v1/chat/completions', {});
  observed?.upstreamResponded(200, BODY);
  markFirstEvent(req);
}

/** One request through every hook, as the middleware, upstream client and SSE writer call them. */
function oneRequest(observer: RequestObserver, i: number): void {
  const { req, res } = fakeExchange(i);
  inPath(observer, req);
  observer.ended(req, res, { latencyMs: 800, outcome: 'completed' });
}

function main(): void {
  console.log(
    `metrics/tracing hot-path cost (${BATCHES} batches x ${PER_BATCH}), Node ${process.version}`,
  );
  let sink = 0;
  measure('empty_loop', (i) => {
    sink += i;
  });
  const off = readObservabilityConfig({});
  const metrics = new MetricsService(off);
  measure('metrics_request_end', (i) => metrics.requestEnded(facts(i)));

  const observer = new RequestObserver(metrics, new TracingService(off), catalog);
  measure('fake_exchange_only', (i) => fakeExchange(i));
  measure('in_path_hooks', (i) => inPath(observer, fakeExchange(i).req));
  measure('observer_request', (i) => oneRequest(observer, i));

  const on = readObservabilityConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    OTEL_BSP_MAX_QUEUE_SIZE: '2048',
  });
  const tracing = new TracingService(on);
  const traced = new RequestObserver(new MetricsService(off), tracing, catalog);
  measure('observer_request_traced', (i) => oneRequest(traced, i));
  void tracing.onApplicationShutdown().catch(() => undefined);

  const registry = new Registry();
  const h = new Histogram({
    name: 'bench_uncached',
    help: 'x',
    labelNames: ['endpoint', 'model', 'provider', 'stream'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  measure('prom_client_labels_uncached', (i) =>
    h.labels('/v1/chat/completions', MODELS[i % MODELS.length], 'openai', 'true').observe(0.8),
  );
  if (sink === 0.5) {
    console.log(round(sink));
  }
}

main();
