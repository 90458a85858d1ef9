import {
  InvalidRequestError,
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamTimeoutError,
} from '../common/errors/gateway-errors';
import { backoffMs, isRetryable, retryAfterMs } from './retry-policy';

const http = (status: number, headers: Record<string, string> = {}, code = 'upstream_error') =>
  new UpstreamHttpError(status, 'server', 'x', { headers, code });

describe('isRetryable', () => {
  it.each([408, 409, 429, 500, 502, 503, 504, 529])('retries status %i', (status) => {
    expect(isRetryable(http(status))).toBe(true);
  });

  it.each([400, 401, 403, 404, 413, 422])('never retries status %i', (status) => {
    expect(isRetryable(http(status))).toBe(false);
  });

  it('retries connection errors and timeouts, not the client going away or a 400 of ours', () => {
    expect(isRetryable(new UpstreamConnectionError('reset'))).toBe(true);
    expect(isRetryable(new UpstreamTimeoutError('slow'))).toBe(true);
    expect(isRetryable(new InvalidRequestError('bad'))).toBe(false);
    expect(isRetryable(new Error('bug'))).toBe(false);
  });

  it('follows x-should-retry either way, and never retries rejected credentials', () => {
    expect(isRetryable(http(400, { 'x-should-retry': 'true' }))).toBe(true);
    expect(isRetryable(http(503, { 'x-should-retry': 'false' }))).toBe(false);
    expect(isRetryable(http(502, {}, 'upstream_auth_failed'))).toBe(false);
  });
});

describe('backoff', () => {
  const settings = { attempts: 5, backoffMs: 100, maxBackoffMs: 1000 };

  it('draws a full-jitter wait under an exponential ceiling with a cap', () => {
    expect(backoffMs(1, settings, undefined, () => 0.999)).toBe(99);
    expect(backoffMs(3, settings, undefined, () => 0.999)).toBe(399);
    expect(backoffMs(10, settings, undefined, () => 0.999)).toBe(999);
    expect(backoffMs(3, settings, undefined, () => 0)).toBe(0);
  });

  it('waits at least what retry-after-ms or retry-after asks', () => {
    expect(backoffMs(1, settings, http(429, { 'retry-after-ms': '750' }), () => 0)).toBe(750);
    expect(backoffMs(1, settings, http(429, { 'retry-after': '2' }), () => 0)).toBe(2000);
    const date = new Date(Date.now() + 3000).toUTCString();
    expect(retryAfterMs(http(503, { 'retry-after': date }))).toBeGreaterThan(1000);
    expect(retryAfterMs(http(503, { 'retry-after': 'soon' }))).toBeUndefined();
  });
});
