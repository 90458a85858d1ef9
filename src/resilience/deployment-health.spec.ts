import type { CatalogDeployment, CatalogProvider } from '../catalog/catalog.types';
import { type BreakerSettings, DeploymentHealth } from './deployment-health';
import { type Candidate, pickDeployment } from './deployment-picker';
import { RetryBudget } from './retry-budget';

const SETTINGS: BreakerSettings = {
  consecutiveFailures: 3,
  failureRate: 0.5,
  window: 10,
  cooldownMs: 1000,
  maxCooldownMs: 3000,
};

function health(transitions: string[] = []): DeploymentHealth {
  return new DeploymentHealth('m@p', 'm', 'p', SETTINGS, (h, from) =>
    transitions.push(`${from}->${h.state}`),
  );
}

function fail(h: DeploymentHealth, now: number): void {
  h.started();
  h.failed(now);
  h.released();
}

describe('DeploymentHealth', () => {
  it('ejects after consecutive failures, probes once after the cooldown, closes on success', () => {
    const transitions: string[] = [];
    const h = health(transitions);
    for (let i = 0; i < 3; i++) {
      fail(h, 0);
    }
    expect(h.state).toBe('open');
    expect(h.available(999)).toBe(false);
    expect(h.available(1000)).toBe(true);
    h.started();
    expect(h.available(1000)).toBe(false); // one probe at a time
    h.succeeded();
    h.released();
    expect(h.state).toBe('closed');
    expect(transitions).toEqual(['closed->open', 'open->half_open', 'half_open->closed']);
  });

  it('keeps an ejected deployment half-open when its probe was a request the gateway refused', () => {
    const h = health();
    for (let i = 0; i < 3; i++) {
      fail(h, 0);
    }
    expect(h.available(1000)).toBe(true);
    h.started();
    h.abandoned();
    h.released();
    // Nothing was learned: still half-open, and the next request may probe again.
    expect(h.state).toBe('half_open');
    expect(h.available(1000)).toBe(true);
  });

  it('doubles the cooldown on each ejection, up to the cap', () => {
    const h = health();
    for (let i = 0; i < 3; i++) {
      fail(h, 0);
    }
    expect(h.openUntil).toBe(1000);
    h.available(1000);
    fail(h, 1000); // the probe failed
    expect(h.openUntil).toBe(3000);
    h.available(3000);
    fail(h, 3000);
    expect(h.openUntil).toBe(6000); // capped at 3000
  });

  it('ejects on an error rate over the window without consecutive failures', () => {
    const h = health();
    for (let i = 0; i < 10; i++) {
      h.started();
      if (i % 2 === 1) {
        h.failed(0);
      } else {
        h.succeeded();
      }
      h.released();
    }
    expect(h.state).toBe('open');
  });
});

const provider = (name: string): CatalogProvider =>
  ({ name, available: true }) as unknown as CatalogProvider;

function candidate(name: string, weight: number): Candidate {
  const deployment: CatalogDeployment = { provider: provider(name), upstreamId: 'u', weight };
  return { deployment, health: health() };
}

describe('pickDeployment', () => {
  it('spreads idle traffic by weight', () => {
    const all = [candidate('a', 3), candidate('b', 1)];
    let seed = 0;
    const random = (): number => (seed = (seed * 9301 + 49297) % 233280) / 233280;
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) {
      const name = pickDeployment(all, new Set(), 0, random)?.deployment.provider.name as 'a' | 'b';
      counts[name]++;
    }
    // Two draws by weight, the less loaded wins: with no load, the first draw (3:1).
    expect(counts.a / 4000).toBeGreaterThan(0.65);
    expect(counts.a / 4000).toBeLessThan(0.85);
  });

  it('prefers the deployment with fewer requests in flight', () => {
    const [a, b] = [candidate('a', 1), candidate('b', 1)];
    a.health.inFlight = 5;
    const draws = [0.1, 0.9]; // a, then b
    expect(pickDeployment([a, b], new Set(), 0, () => draws.shift() ?? 0)).toBe(b);
  });

  it('moves to an untried deployment, skips ejected ones, and retries a single one', () => {
    const [a, b] = [candidate('a', 1), candidate('b', 1)];
    expect(pickDeployment([a, b], new Set([a.deployment]), 0)).toBe(b);
    for (let i = 0; i < 3; i++) {
      fail(b.health, 0);
    }
    expect(pickDeployment([a, b], new Set(), 0)).toBe(a);
    expect(pickDeployment([a], new Set([a.deployment]), 0)).toBe(a);
  });

  it('never fails hard while every deployment is ejected: the first to cool down is tried', () => {
    const [a, b] = [candidate('a', 1), candidate('b', 1)];
    for (let i = 0; i < 3; i++) {
      fail(a.health, 10);
      fail(b.health, 0);
    }
    expect(pickDeployment([a, b], new Set(), 20)).toBe(b);
    expect(pickDeployment([a, b], new Set([b.deployment]), 20)).toBeUndefined();
  });
});

describe('RetryBudget', () => {
  it('allows retries up to 20% of requests in flight, with a floor of three', () => {
    const budget = new RetryBudget(0.2, 3);
    for (let i = 0; i < 20; i++) {
      budget.requestStarted();
    }
    expect([1, 2, 3, 4, 5].map(() => budget.tryRetry())).toEqual([true, true, true, true, false]);
    budget.retryEnded();
    expect(budget.tryRetry()).toBe(true);
  });
});

describe('DeploymentHealth, the last healthy deployment', () => {
  it('is never ejected: it keeps taking traffic, degraded', () => {
    const h = new DeploymentHealth(
      'm@p',
      'm',
      'p',
      SETTINGS,
      () => undefined,
      () => false,
    );
    for (let i = 0; i < 5; i++) {
      fail(h, 0);
    }
    expect(h.state).toBe('closed');
    expect(h.available(0)).toBe(true);
  });
});
