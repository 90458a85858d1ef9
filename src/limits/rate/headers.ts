/**
 * Rate-limit response headers in each vendor's dialect (wire-formats.md 7.1, 7.2):
 * OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, reset as a Go duration
 * ("1s", "6m0s", "120ms"); Anthropic: `anthropic-ratelimit-{requests,tokens}-{limit,
 * remaining,reset}`, reset as an RFC 3339 time. Reset is when the bucket is full again.
 */
export type HeaderFamily = 'openai' | 'anthropic';

export interface HeaderDimension {
  limit: number;
  remaining: number;
  /** Milliseconds until fully replenished. */
  resetMs: number;
}

export interface RateLimitSnapshot {
  requests?: HeaderDimension;
  tokens?: HeaderDimension;
}

/** Longest wait openai-node honours from `retry-after` (wire-formats.md 7.3). */
export const MAX_RETRY_AFTER_S = 60;

/** Go's `time.Duration.String()` for a whole number of milliseconds. */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) {
    return '0s';
  }
  if (total < 1000) {
    return `${total}ms`;
  }
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${(total % 60_000) / 1000}s`;
  if (hours > 0) {
    return `${hours}h${minutes}m${seconds}`;
  }
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

/** RFC 3339 UTC time, whole seconds (rounded up so the reset is never early). */
export function rfc3339(epochMs: number): string {
  return new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `retry-after` seconds: whole, at least 1, at most what every SDK honours. */
export function retryAfterSeconds(ms: number): number {
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(ms / 1000)));
}

const METRICS = ['requests', 'tokens'] as const;

/** Header names per dialect and metric: limit, remaining, reset. Built once, not per request. */
const NAMES: Record<HeaderFamily, Record<(typeof METRICS)[number], [string, string, string]>> = {
  openai: {
    requests: [
      'x-ratelimit-limit-requests',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
    ],
    tokens: [
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
    ],
  },
  anthropic: {
    requests: [
      'anthropic-ratelimit-requests-limit',
      'anthropic-ratelimit-requests-remaining',
      'anthropic-ratelimit-requests-reset',
    ],
    tokens: [
      'anthropic-ratelimit-tokens-limit',
      'anthropic-ratelimit-tokens-remaining',
      'anthropic-ratelimit-tokens-reset',
    ],
  },
};

/** Every rate-limit header the gateway may send, for CORS to expose to browser clients. */
export const RATE_LIMIT_HEADER_NAMES: readonly string[] = Object.values(NAMES).flatMap((byMetric) =>
  Object.values(byMetric).flat(),
);

export function rateLimitHeaders(
  family: HeaderFamily,
  snapshot: RateLimitSnapshot,
  nowMs: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const names = NAMES[family];
  for (const metric of METRICS) {
    const dim = snapshot[metric];
    if (!dim) {
      continue;
    }
    const [limit, remaining, reset] = names[metric];
    /* eslint-disable local/no-inherited-lookup -- names from the constant NAMES table, never input */
    headers[limit] = String(dim.limit);
    headers[remaining] = String(Math.max(0, Math.floor(dim.remaining)));
    headers[reset] = family === 'openai' ? goDuration(dim.resetMs) : rfc3339(nowMs + dim.resetMs);
    /* eslint-enable local/no-inherited-lookup */
  }
  return headers;
}
