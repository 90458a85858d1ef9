/** Benchmark settings: models, variants, load shape, timeouts (see run.ts). */
import { join } from 'node:path';

export const ROOT = join(__dirname, '..');
export const API_KEY = 'bench-key';
/** Chat model, on an `openai-compatible` provider (chat fast path). */
export const MODEL = 'bench-model';
/** On a `kind: openai` provider: /v1/responses goes to its own `/responses` (fast path). */
export const RESPONSES_MODEL = 'bench-gpt';
/**
 * On the `kind: openai` provider with `upstream_api: responses`: /v1/chat/completions is
 * translated to its `/responses`.
 */
export const RESPONSES_API_MODEL = 'bench-gpt-pro';
/**
 * On a `kind: anthropic` provider: /v1/messages goes to its `/v1/messages` (fast path),
 * /v1/chat/completions is translated to it.
 */
export const MESSAGES_MODEL = 'bench-claude';
export const LOG_LEVEL = 'info';
export const CHAT_PATH = '/v1/chat/completions';
export const CHUNK_COUNT = 10;
/** The gateway's own key for the fake upstream (the fake upstream does not check it). */
export const UPSTREAM_KEY_ENV = 'BENCH_UPSTREAM_API_KEY';

/**
 * BENCH_SCALE (0 < s <= 1) shrinks every count and duration, for a quick smoke run; the
 * default of 1 gives the published numbers in about 5m30s on 2 cores.
 */
export const SCALE = readScale(process.env.BENCH_SCALE);

export interface Variant {
  name: string;
  latencyMs: number;
  chunkIntervalMs: number;
  /** Interleaved non-streamed pairs of the chat case: warm-up, then measured. */
  latencyWarmupPairs: number;
  latencyPairs: number;
  /** The same for the other entries of LATENCY_CASES (`short` sampling). */
  shortLatencyPairs: PairCounts;
  /**
   * Interleaved streamed pairs (warm-up, then measured) per stream case: `full` for the
   * chat stream, `short` for the other entries of STREAM_CASES.
   */
  streamPairs: Record<Sampling, PairCounts>;
}

export interface PairCounts {
  warmup: number;
  measured: number;
}

export type Sampling = 'full' | 'short';

// The 20 ms variant gets fewer pairs: each pair costs two upstream delays, and the whole
// run must stay within about six minutes (the translated and protected cases use the `short`
// counts).
export const VARIANTS: Variant[] = [
  {
    name: 'upstream 0 ms',
    latencyMs: 0,
    chunkIntervalMs: 0,
    latencyWarmupPairs: 1000,
    latencyPairs: 2000,
    shortLatencyPairs: { warmup: 300, measured: 1000 },
    streamPairs: {
      full: { warmup: 300, measured: 1000 },
      short: { warmup: 150, measured: 300 },
    },
  },
  {
    name: 'upstream 20 ms',
    latencyMs: 20,
    chunkIntervalMs: 1,
    latencyWarmupPairs: 100,
    latencyPairs: 1000,
    shortLatencyPairs: { warmup: 20, measured: 150 },
    streamPairs: {
      full: { warmup: 50, measured: 400 },
      short: { warmup: 20, measured: 120 },
    },
  },
];

export const LOAD = { connections: 64, durationS: 10, warmupS: 2 };
/**
 * The capacity phase (streams.ts): this many chat streams open at once, each with
 * CHUNK_COUNT content chunks `chunkIntervalMs` apart (about 30 s a stream: the first half
 * must still be open once the second half is, for the marginal memory figure, and opening
 * 2,500 streams can take ten seconds on a busy 2-core machine).
 */
export const STREAMS = { count: 5000, chunkIntervalMs: 3000 };
/**
 * Short bursts before the sequential phases so that the gateway's hot paths are
 * JIT-compiled: `durationS` for the non-streamed and the streamed chat requests,
 * `extraStreamS` for every other case (most of their path is shared with chat).
 */
export const BURST = { connections: 10, durationS: 2, extraStreamS: 1 };
/**
 * Rate limits of the gateway child (src/config/limits.config.ts; 0 there means no limit):
 * high enough that no phase is ever throttled, yet non-zero, so that a gateway that
 * counts requests and tokens does so during the bench as it would in production.
 */
export const RATE_LIMIT_ENV = {
  RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000000',
  RATE_LIMIT_TOKENS_PER_MINUTE: '1000000000000',
  RATE_LIMIT_MAX_CONCURRENT_STREAMS: '100000',
};
/** Per-request bound for the sequential phases: a stuck gateway fails the run, not hangs it. */
export const REQUEST_TIMEOUT_MS = 10_000;
export const READY_TIMEOUT_MS = 30_000;
export const STOP_TIMEOUT_MS = 10_000;

export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export function readScale(raw: string | undefined): number {
  const value = raw === undefined || raw === '' ? 1 : Number(raw);
  if (!(value > 0 && value <= 1)) {
    throw new Error(`BENCH_SCALE must be a number in (0, 1], not ${raw}`);
  }
  return value;
}
