import { Inject, Injectable } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';
import type { CanonicalUsage } from '../../core/canonical';
import { observabilityConfig } from '../../config/observability.config';
import { MetricChildren } from './metric-children';

/**
 * Seconds. Dense below 10 ms so that the gateway's own overhead (tens to hundreds of
 * microseconds) is resolved, then coarse up to the length of a long reasoning answer.
 */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  30, 60, 120, 300,
];
/** Seconds; the gateway's own time only: 25 µs to 1 s. */
export const OVERHEAD_BUCKETS = [
  0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
];
/** The bucket boundaries the OpenTelemetry GenAI conventions recommend for token counts. */
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** Metric names other modules may register: the gateway's own, or a GenAI convention's. */
const NAME = /^(gateway|gen_ai)_[a-z0-9_]+$/;

/** What the access log knows when a response closes, as the metrics need it. */
export interface RequestFacts {
  /** Route template (`/v1/chat/completions`), never the raw path. */
  endpoint: string;
  status: number;
  outcome: 'success' | 'error' | 'client_closed';
  model?: string;
  provider?: string;
  stream?: boolean;
  keyId?: string;
  durationSeconds: number;
  /** Arrival to upstream dispatch, when an upstream was called. */
  overheadSeconds?: number;
  /** Upstream dispatch to its response headers. */
  upstreamFirstByteSeconds?: number;
  /** Arrival to the first event written to the client (streams). */
  firstTokenSeconds?: number;
  usage?: CanonicalUsage;
  costUsd?: number;
  errorCode?: string;
  /** The `x-gateway-protections` value without details (`name=verdict,...`). */
  protections?: string;
  protectionUsage?: { protection: string; model: string; costUsd: number }[];
}

const TOKEN_TYPES = ['input', 'cached_input', 'cache_write_input', 'output', 'reasoning'] as const;
/** Refusals counted as rate-limit rejections, by `reason`; `insufficient_quota` is a spent budget. */
const RATE_LIMIT_CODES = new Set([
  'rate_limit_exceeded',
  'rate_limiter_unavailable',
  'insufficient_quota',
]);

/**
 * The gateway's Prometheus registry and its typed update methods. One registry per app
 * (not prom-client's global one), so several gateways in one process (tests) stay apart.
 * Other modules add their metrics with {@link counter}, {@link gauge} and
 * {@link histogram}; values that already live elsewhere are best read at scrape time with
 * a `collect` callback, which costs the request path nothing.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly perKey: boolean;
  private readonly requests: MetricChildren<Counter.Internal>;
  private readonly duration: MetricChildren<Histogram.Internal<string>>;
  private readonly overhead: MetricChildren<Histogram.Internal<string>>;
  private readonly upstreamFirstByte: MetricChildren<Histogram.Internal<string>>;
  private readonly firstToken: MetricChildren<Histogram.Internal<string>>;
  private readonly perOutputToken: MetricChildren<Histogram.Internal<string>>;
  private readonly tokenUsage: MetricChildren<Histogram.Internal<string>>;
  private readonly tokens: MetricChildren<Counter.Internal>;
  private readonly cost: MetricChildren<Counter.Internal>;
  private readonly protectionCost: MetricChildren<Counter.Internal>;
  private readonly verdicts: MetricChildren<Counter.Internal>;
  private readonly rateLimited: MetricChildren<Counter.Internal>;

  constructor(@Inject(observabilityConfig.KEY) config: ConfigType<typeof observabilityConfig>) {
    this.perKey = config.metricsPerKey;
    const key = this.perKey ? ['key_id'] : [];
    collectDefaultMetrics({ register: this.registry });
    this.requests = this.children(
      new Counter({
        name: 'gateway_requests_total',
        help: 'Requests answered, by route, model, provider, status class and outcome.',
        labelNames: ['endpoint', 'model', 'provider', 'status_class', 'outcome', ...key],
        registers: [this.registry],
      }),
    );
    this.duration = this.children(
      this.histogram({
        name: 'gateway_request_duration_seconds',
        help: 'Arrival of the request to the end of its response (streams: the last event).',
        labelNames: ['endpoint', 'model', 'provider', 'stream'],
        buckets: LATENCY_BUCKETS,
      }),
    );
    this.overhead = this.children(
      this.histogram({
        name: 'gateway_overhead_seconds',
        help: 'Time the gateway adds before the upstream call: arrival to upstream dispatch.',
        labelNames: ['endpoint', 'provider'],
        buckets: OVERHEAD_BUCKETS,
      }),
    );
    this.upstreamFirstByte = this.children(
      this.histogram({
        name: 'gateway_upstream_time_to_first_byte_seconds',
        help: 'Upstream dispatch to the upstream response headers.',
        labelNames: ['model', 'provider'],
        buckets: LATENCY_BUCKETS,
      }),
    );
    const genAi = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'];
    this.firstToken = this.children(
      this.histogram({
        name: 'gen_ai_server_time_to_first_token_seconds',
        help: 'Arrival of a streamed request to its first event sent to the client.',
        labelNames: genAi,
        buckets: LATENCY_BUCKETS,
      }),
    );
    this.perOutputToken = this.children(
      this.histogram({
        name: 'gen_ai_server_time_per_output_token_seconds',
        help: 'Streams: time after the first event divided by the further output tokens.',
        labelNames: genAi,
        buckets: LATENCY_BUCKETS,
      }),
    );
    this.tokenUsage = this.children(
      this.histogram({
        name: 'gen_ai_client_token_usage',
        help: 'Tokens per request (OpenTelemetry GenAI gen_ai.client.token.usage).',
        labelNames: [...genAi, 'gen_ai_token_type'],
        buckets: TOKEN_BUCKETS,
      }),
    );
    this.tokens = this.children(
      this.counter({
        name: 'gateway_tokens_total',
        help: 'Tokens by model and type (input counts cached and cache-written input too).',
        labelNames: ['model', 'provider', 'type', ...key],
      }),
    );
    this.cost = this.children(
      this.counter({
        name: 'gateway_cost_usd_total',
        help: 'Cost of the answers in USD at catalog prices.',
        labelNames: ['model', 'provider', ...key],
      }),
    );
    this.protectionCost = this.children(
      this.counter({
        name: 'gateway_protection_cost_usd_total',
        help: "Cost in USD of the protections' own model calls (never part of the answer's).",
        labelNames: ['protection', 'model'],
      }),
    );
    this.verdicts = this.children(
      this.counter({
        name: 'gateway_protection_verdicts_total',
        help: 'Protection verdicts (pass, flagged, blocked, redacted, error) by protection.',
        labelNames: ['protection', 'verdict'],
      }),
    );
    this.rateLimited = this.children(
      this.counter({
        name: 'gateway_rate_limit_rejections_total',
        help: 'Requests refused by rate limits or a spent budget (429), or because limits could not be checked.',
        labelNames: ['endpoint', 'model', 'reason'],
      }),
    );
  }

  /** A counter in the gateway registry; for modules that add their own metrics. */
  counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
    return new Counter({ ...checked(config), registers: [this.registry] });
  }

  /** A gauge in the gateway registry; use `collect` to read a value at scrape time. */
  gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T> {
    return new Gauge({ ...checked(config), registers: [this.registry] });
  }

  /** A histogram in the gateway registry; prefer the bucket sets exported here. */
  histogram<T extends string>(config: Omit<HistogramConfiguration<T>, 'registers'>): Histogram<T> {
    return new Histogram({ ...checked(config), registers: [this.registry] });
  }

  /** The exposition text, for `GET /metrics`. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Records one finished request: called once per response, when it closes. */
  requestEnded(f: RequestFacts): void {
    const model = f.model ?? 'none';
    const provider = f.provider ?? 'none';
    const statusClass = `${Math.floor(f.status / 100)}xx`;
    const requestLabels = [f.endpoint, model, provider, statusClass, f.outcome];
    if (this.perKey) {
      requestLabels.push(f.keyId ?? 'none');
    }
    this.requests.get(requestLabels).inc();
    this.duration
      .get([f.endpoint, model, provider, f.stream === true ? 'true' : 'false'])
      .observe(f.durationSeconds);
    if (f.overheadSeconds !== undefined) {
      this.overhead.get([f.endpoint, provider]).observe(f.overheadSeconds);
    }
    if (f.upstreamFirstByteSeconds !== undefined) {
      this.upstreamFirstByte.get([model, provider]).observe(f.upstreamFirstByteSeconds);
    }
    const genAi = ['chat', provider, model];
    if (f.firstTokenSeconds !== undefined && f.outcome === 'success') {
      this.firstToken.get(genAi).observe(f.firstTokenSeconds);
      const further = (f.usage?.outputTokens ?? 0) - 1;
      if (further > 0) {
        this.perOutputToken.get(genAi).observe((f.durationSeconds - f.firstTokenSeconds) / further);
      }
    }
    if (f.usage !== undefined) {
      this.recordUsage(f, genAi, model, provider);
    }
    if (f.errorCode !== undefined && RATE_LIMIT_CODES.has(f.errorCode)) {
      this.rateLimited.get([f.endpoint, model, f.errorCode]).inc();
    }
    if (f.protections !== undefined) {
      this.recordVerdicts(f.protections);
    }
    for (const u of f.protectionUsage ?? []) {
      this.protectionCost.get([u.protection, u.model]).inc(u.costUsd);
    }
  }

  private recordUsage(f: RequestFacts, genAi: string[], model: string, provider: string): void {
    const u = f.usage as CanonicalUsage;
    this.tokenUsage.get([...genAi, 'input']).observe(u.inputTokens);
    this.tokenUsage.get([...genAi, 'output']).observe(u.outputTokens);
    const counts = [
      u.inputTokens,
      u.cachedInputTokens ?? 0,
      u.cacheWriteInputTokens ?? 0,
      u.outputTokens,
      u.reasoningTokens ?? 0,
    ];
    const key = this.perKey ? [f.keyId ?? 'none'] : [];
    for (let i = 0; i < TOKEN_TYPES.length; i++) {
      if (counts[i] > 0) {
        this.tokens.get([model, provider, TOKEN_TYPES[i], ...key]).inc(counts[i]);
      }
    }
    if (f.costUsd !== undefined && f.costUsd > 0) {
      this.cost.get([model, provider, ...key]).inc(f.costUsd);
    }
  }

  /** `name=verdict[;detail=...]` entries, comma-separated (see ProtectionReport). */
  private recordVerdicts(report: string): void {
    for (const entry of report.split(',')) {
      const eq = entry.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      const semi = entry.indexOf(';', eq);
      const verdict = entry.slice(eq + 1, semi === -1 ? undefined : semi);
      this.verdicts.get([entry.slice(0, eq).trim(), verdict]).inc();
    }
  }

  private children<C>(metric: { labels(...v: string[]): C }): MetricChildren<C> {
    return new MetricChildren(metric);
  }
}

function checked<C extends { name: string }>(config: C): C {
  if (!NAME.test(config.name)) {
    throw new Error(`Metric name '${config.name}' must match ${String(NAME)}`);
  }
  return config;
}
