import type { CatalogProvider } from '../catalog/catalog.types';
import { DEFAULT_BREAKER, DeploymentHealth } from './deployment-health';
import { DeploymentLimiter } from './deployment-limiter';
import { type Candidate, capacityWaitMs, pickDeployment } from './deployment-picker';

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

describe('DeploymentLimiter', () => {
  it('holds max_concurrent attempts in flight, and frees one when it ends', () => {
    const l = new DeploymentLimiter({ maxConcurrent: 2 }, 0);
    l.acquire();
    expect(l.waitMs(0)).toBe(0);
    l.acquire();
    expect(l.waitMs(0)).toBeGreaterThan(0);
    l.release(undefined);
    expect(l.waitMs(0)).toBe(0);
  });

  it('spends requests per minute as a bucket that refills over the minute', () => {
    const l = new DeploymentLimiter({ requestsPerMinute: 2 }, 0);
    l.acquire();
    l.release(undefined);
    l.acquire();
    l.release(undefined);
    // Empty: the next slot is half a minute away (2 a minute), refilled continuously.
    expect(l.waitMs(0)).toBe(30_000);
    expect(l.waitMs(15_000)).toBe(15_000);
    expect(l.waitMs(30_000)).toBe(0);
    // Never more than a minute's worth saved up.
    expect(l.waitMs(10 * 60_000)).toBe(0);
    for (let i = 0; i < 2; i++) {
      l.acquire();
      l.release(undefined);
    }
    expect(l.waitMs(10 * 60_000)).toBeGreaterThan(0);
  });

  it('gives the request back when the upstream was never asked', () => {
    const l = new DeploymentLimiter({ requestsPerMinute: 1 }, 0);
    l.acquire();
    l.release(undefined, true);
    expect(l.waitMs(0)).toBe(0);
    l.acquire();
    l.release(undefined);
    expect(l.waitMs(0)).toBeGreaterThan(0);
  });

  it('counts the tokens an answer reported against tokens per minute', () => {
    const l = new DeploymentLimiter({ tokensPerMinute: 600 }, 0);
    l.acquire();
    expect(l.waitMs(0)).toBe(0); // tokens count once the answer ended
    l.release(usage(500, 200));
    // 100 tokens in debt: back above zero after 101 tokens' worth of the minute.
    expect(l.waitMs(0)).toBe(Math.ceil((101 * 60_000) / 600));
    expect(l.waitMs(11_000)).toBe(0);
  });
});

describe('pickDeployment with limits', () => {
  const provider = (name: string): CatalogProvider => ({
    name,
    kind: 'openai',
    baseUrl: 'https://x.test',
    headers: {},
    available: true,
  });
  const candidate = (name: string, limiter?: DeploymentLimiter): Candidate => ({
    deployment: { provider: provider(name), upstreamId: 'm', weight: 1 },
    health: new DeploymentHealth(`m@${name}`, 'm', name, DEFAULT_BREAKER, () => undefined),
    limiter,
  });

  it('skips a deployment at its limits, and says how long until one frees up when all are', () => {
    const full = new DeploymentLimiter({ requestsPerMinute: 1 }, 0);
    full.acquire();
    const a = candidate('a', full);
    const b = candidate('b', new DeploymentLimiter({ maxConcurrent: 1 }, 0));
    for (let i = 0; i < 20; i++) {
      expect(pickDeployment([a, b], new Set(), 0)?.deployment.provider.name).toBe('b');
    }
    expect(capacityWaitMs([a, b], 0)).toBeUndefined();
    b.limiter?.acquire();
    expect(pickDeployment([a, b], new Set(), 0)).toBeUndefined();
    expect(capacityWaitMs([a, b], 0)).toBe(1_000);
    // A deployment without limits is never full.
    expect(capacityWaitMs([a, candidate('c')], 0)).toBeUndefined();
  });
});
