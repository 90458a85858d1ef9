import { goDuration, rateLimitHeaders, retryAfterSeconds, rfc3339 } from './headers';

describe('goDuration', () => {
  it.each([
    [0, '0s'],
    [-5, '0s'],
    [1, '1ms'],
    [12, '12ms'],
    [999, '999ms'],
    [0.2, '1ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1234, '1.234s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [90_500, '1m30.5s'],
    [360_000, '6m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_500, '1h2m3.5s'],
  ])('formats %p ms as %p, like Go time.Duration', (ms, expected) => {
    expect(goDuration(ms)).toBe(expected);
  });
});

describe('rfc3339', () => {
  it('gives whole seconds in UTC, rounded up so a reset is never early', () => {
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02T03:04:05Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 1))).toBe('2026-01-02T03:04:06Z');
  });
});

describe('retryAfterSeconds', () => {
  it.each([
    [0, 1],
    [1, 1],
    [1000, 1],
    [1001, 2],
    [59_500, 60],
    [600_000, 60],
  ])('turns %p ms into %p s (whole, 1..60 so every SDK honours it)', (ms, s) => {
    expect(retryAfterSeconds(ms)).toBe(s);
  });
});

describe('rateLimitHeaders', () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0);
  const snapshot = {
    requests: { limit: 60, remaining: 59, resetMs: 1000 },
    tokens: { limit: 100_000, remaining: 98_765.4, resetMs: 360_000 },
  };

  it('uses the OpenAI header names with Go durations on OpenAI endpoints', () => {
    expect(rateLimitHeaders('openai', snapshot, now)).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '59',
      'x-ratelimit-reset-requests': '1s',
      'x-ratelimit-limit-tokens': '100000',
      'x-ratelimit-remaining-tokens': '98765',
      'x-ratelimit-reset-tokens': '6m0s',
    });
  });

  it('uses the Anthropic header names with RFC 3339 times on /v1/messages', () => {
    expect(rateLimitHeaders('anthropic', snapshot, now)).toEqual({
      'anthropic-ratelimit-requests-limit': '60',
      'anthropic-ratelimit-requests-remaining': '59',
      'anthropic-ratelimit-requests-reset': '2026-06-01T12:00:01Z',
      'anthropic-ratelimit-tokens-limit': '100000',
      'anthropic-ratelimit-tokens-remaining': '98765',
      'anthropic-ratelimit-tokens-reset': '2026-06-01T12:06:00Z',
    });
  });

  it('reports a bucket in debt as 0 remaining', () => {
    const headers = rateLimitHeaders(
      'openai',
      { tokens: { limit: 10, remaining: -40, resetMs: 300_000 } },
      now,
    );
    expect(headers['x-ratelimit-remaining-tokens']).toBe('0');
    expect(headers['x-ratelimit-reset-tokens']).toBe('5m0s');
  });

  it('sends only the dimensions that are limited', () => {
    expect(Object.keys(rateLimitHeaders('openai', { requests: snapshot.requests }, now))).toEqual([
      'x-ratelimit-limit-requests',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
    ]);
    expect(rateLimitHeaders('anthropic', {}, now)).toEqual({});
  });
});
