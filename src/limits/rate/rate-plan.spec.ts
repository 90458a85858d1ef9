import type { AcquireResult } from './rate-limit.store';
import {
  type PlanInput,
  effectiveLimits,
  planRequest,
  refusalMessage,
  snapshotOf,
} from './rate-plan';

const NONE = { requestsPerMinute: 0, tokensPerMinute: 0, maxConcurrentStreams: 0 };

function input(over: Partial<PlanInput> = {}): PlanInput {
  return {
    prefix: 'gw:rl:',
    keyId: 'abc123',
    model: 'gpt-x',
    limits: NONE,
    stream: false,
    tokenCost: () => 500,
    leaseId: () => 'lease-1',
    ...over,
  };
}

describe('effectiveLimits', () => {
  it('lays the key overrides over the environment defaults, field by field', () => {
    const defaults = { requestsPerMinute: 60, tokensPerMinute: 1000, maxConcurrentStreams: 2 };
    expect(effectiveLimits(defaults, { tokensPerMinute: 0, maxConcurrentStreams: 5 })).toEqual({
      requestsPerMinute: 60,
      tokensPerMinute: 0,
      maxConcurrentStreams: 5,
    });
    expect(effectiveLimits(defaults, undefined)).toBe(defaults);
  });
});

describe('planRequest', () => {
  it('plans nothing when no limit applies, without estimating tokens', () => {
    const tokenCost = jest.fn(() => 1);
    expect(planRequest(input({ tokenCost, stream: true }))).toBeUndefined();
    expect(tokenCost).not.toHaveBeenCalled();
  });

  it('plans one bucket per limited rate and a lease for a stream, keyed by key id', () => {
    const plan = planRequest(
      input({
        limits: { requestsPerMinute: 60, tokensPerMinute: 1000, maxConcurrentStreams: 2 },
        stream: true,
      }),
    );
    expect(plan?.tokenCost).toBe(500);
    expect(plan?.dims).toEqual([
      {
        metric: 'requests',
        scope: 'key',
        spec: {
          kind: 'bucket',
          key: 'gw:rl:{abc123}:requests',
          capacity: 60,
          windowMs: 60_000,
          cost: 1,
        },
      },
      {
        metric: 'tokens',
        scope: 'key',
        spec: {
          kind: 'bucket',
          key: 'gw:rl:{abc123}:tokens',
          capacity: 1000,
          windowMs: 60_000,
          cost: 500,
        },
      },
      {
        metric: 'streams',
        scope: 'key',
        spec: { kind: 'lease', key: 'gw:rl:{abc123}:streams', capacity: 2, leaseId: 'lease-1' },
      },
    ]);
  });

  it('charges no tokens for a request that generates nothing, but still counts it', () => {
    const tokenCost = jest.fn(() => 42);
    const plan = planRequest(
      input({
        limits: { requestsPerMinute: 5, tokensPerMinute: 1000, maxConcurrentStreams: 1 },
        stream: true,
        chargesTokens: false,
        tokenCost,
      }),
    );
    expect(plan?.dims.map((d) => d.metric)).toEqual(['requests', 'streams']);
    expect(tokenCost).not.toHaveBeenCalled();
  });

  it('takes no stream lease for a request that does not stream', () => {
    const plan = planRequest(input({ limits: { ...NONE, maxConcurrentStreams: 1 } }));
    expect(plan).toBeUndefined();
  });

  it('adds per-model buckets next to the key-wide ones, estimating tokens once', () => {
    const tokenCost = jest.fn(() => 42);
    const plan = planRequest(
      input({
        limits: { ...NONE, tokensPerMinute: 1000 },
        modelLimits: { requestsPerMinute: 5, tokensPerMinute: 100 },
        tokenCost,
      }),
    );
    expect(plan?.dims.map((d) => [d.scope, d.metric, d.spec.key])).toEqual([
      ['key', 'tokens', 'gw:rl:{abc123}:tokens'],
      ['model', 'requests', 'gw:rl:{abc123}:model:gpt-x:requests'],
      ['model', 'tokens', 'gw:rl:{abc123}:model:gpt-x:tokens'],
    ]);
    expect(tokenCost).toHaveBeenCalledTimes(1);
  });
});

describe('snapshotOf and refusalMessage', () => {
  const plan = planRequest(
    input({
      limits: { requestsPerMinute: 60, tokensPerMinute: 1000, maxConcurrentStreams: 0 },
      modelLimits: { requestsPerMinute: 10 },
    }),
  )!;
  const result = (over: Partial<AcquireResult>): AcquireResult => ({
    allowed: true,
    refused: -1,
    retryAfterMs: 0,
    dims: [
      { remaining: 50, resetMs: 10_000 },
      { remaining: 400, resetMs: 36_000 },
      { remaining: 3, resetMs: 42_000 },
    ],
    ...over,
  });

  it('reports the tighter of the key-wide and per-model request buckets', () => {
    expect(snapshotOf(plan, result({}))).toEqual({
      requests: { limit: 10, remaining: 3, resetMs: 42_000 },
      tokens: { limit: 1000, remaining: 400, resetMs: 36_000 },
    });
  });

  it('reports the bucket that refused', () => {
    const refused = result({ allowed: false, refused: 0, retryAfterMs: 1000 });
    expect(snapshotOf(plan, refused).requests).toEqual({
      limit: 60,
      remaining: 50,
      resetMs: 10_000,
    });
    expect(refusalMessage(plan, refused, '1s')).toBe(
      'Rate limit reached for requests per minute: limit 60. Please try again in 1s.',
    );
  });

  it('names the model scope and the token figures in the message', () => {
    expect(refusalMessage(plan, result({ allowed: false, refused: 2 }), '6s')).toContain(
      'requests per minute for this model: limit 10',
    );
    expect(
      refusalMessage(plan, result({ allowed: false, refused: 1, retryAfterMs: 3000 }), '3s'),
    ).toBe(
      'Rate limit reached for tokens per minute: limit 1000, remaining 400, requested about 500. Please try again in 3s.',
    );
    expect(
      refusalMessage(plan, result({ allowed: false, refused: 1, retryAfterMs: -1 }), ''),
    ).toMatch(/^Request too large for tokens per minute: it needs about 500 tokens/);
  });
});
