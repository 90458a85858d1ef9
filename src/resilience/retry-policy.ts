import {
  GatewayError,
  UpstreamConnectionError,
  UpstreamTimeoutError,
} from '../common/errors/gateway-errors';
import type { RetrySettings } from '../catalog/catalog.types';

/**
 * Statuses worth another attempt, as the gateway's typed errors carry them: upstream 5xx
 * arrive as 502 (upstream_error), 529 and the 4xx keep their own status.
 */
const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504, 529]);
/** 5xx-classed errors that another attempt cannot fix. */
const NEVER_RETRY_CODES = new Set(['upstream_auth_failed', 'upstream_response_too_large']);

/**
 * Whether a failed upstream attempt may be retried (before anything reached the client):
 * connection errors, timeouts and the statuses above, unless the provider said
 * `x-should-retry: false`; `x-should-retry: true` makes any upstream error retryable.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof UpstreamConnectionError || error instanceof UpstreamTimeoutError) {
    return true;
  }
  if (!(error instanceof GatewayError) || error.code === 'client_closed_request') {
    return false;
  }
  const says = error.headers['x-should-retry'];
  if (says === 'false') {
    return false;
  }
  if (says === 'true') {
    return true;
  }
  if (error.code !== null && NEVER_RETRY_CODES.has(error.code)) {
    return false;
  }
  return RETRYABLE_STATUS.has(error.status) && error.code !== 'context_length_exceeded';
}

/** The wait the upstream asked for (`retry-after-ms`, else `retry-after` in seconds or as a date). */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  if (!(error instanceof GatewayError)) {
    return undefined;
  }
  const ms = Number(error.headers['retry-after-ms']);
  if (error.headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) {
    return ms;
  }
  const after = error.headers['retry-after'];
  if (after === undefined) {
    return undefined;
  }
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) {
    return seconds * 1000;
  }
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Exponential backoff with full jitter (AWS architecture blog): a uniform wait in
 * [0, min(cap, base x 2^(retry-1))], so that clients failing together do not retry together.
 * A `retry-after` from the upstream wins when it is longer.
 */
export function backoffMs(
  retry: number,
  settings: RetrySettings,
  error: unknown,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(random() * ceiling);
  const asked = retryAfterMs(error);
  return asked === undefined ? jittered : Math.max(jittered, asked);
}
