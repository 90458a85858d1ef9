import { ThrottlerGuard, type ThrottlerModuleOptions } from '@nestjs/throttler';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MemoryRateLimitStore } from './memory.store';
import type { BucketSpec, LeaseSpec } from './rate-limit.store';

const MINUTE = 60_000;

function bucket(key: string, capacity: number, cost = 1): BucketSpec {
  return { kind: 'bucket', key, capacity, windowMs: MINUTE, cost };
}

function lease(key: string, capacity: number, leaseId: string): LeaseSpec {
  return { kind: 'lease', key, capacity, leaseId };
}

describe('MemoryRateLimitStore', () => {
  let now: number;
  let store: MemoryRateLimitStore;

  beforeEach(() => {
    now = 1_000_000;
    store = new MemoryRateLimitStore(() => now);
  });
  afterEach(() => store.close());

  it('admits exactly capacity requests in a burst, then refuses', () => {
    const results = Array.from({ length: 7 }, () => store.acquire([bucket('k', 5)]));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(results.map((r) => r.dims[0].remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
  });

  it('says how long until one request fits and until the bucket is full', () => {
    for (let i = 0; i < 60; i++) {
      store.acquire([bucket('k', 60)]);
    }
    const refused = store.acquire([bucket('k', 60)]);
    expect(refused).toMatchObject({ allowed: false, refused: 0, retryAfterMs: 1000 });
    expect(refused.dims[0].resetMs).toBe(MINUTE);
  });

  it('refills continuously: one request per limit/60 s', () => {
    for (let i = 0; i < 60; i++) {
      store.acquire([bucket('k', 60)]);
    }
    now += 999;
    expect(store.acquire([bucket('k', 60)]).allowed).toBe(false);
    now += 1;
    expect(store.acquire([bucket('k', 60)]).allowed).toBe(true);
    now += 30_000;
    expect(store.acquire([bucket('k', 60)]).dims[0].remaining).toBe(29);
  });

  it('never refills above capacity after a long idle time', () => {
    store.acquire([bucket('k', 10)]);
    now += 10 * MINUTE;
    expect(store.acquire([bucket('k', 10)]).dims[0].remaining).toBe(9);
  });

  it('takes a weighted cost and reports a cost above capacity as never admissible', () => {
    expect(store.acquire([bucket('t', 1000, 600)]).dims[0].remaining).toBe(400);
    const refused = store.acquire([bucket('t', 1000, 600)]);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 12_000 });
    expect(store.acquire([bucket('t', 1000, 1001)]).retryAfterMs).toBe(-1);
  });

  it('is all or nothing across dimensions: a refusal takes nothing from the others', () => {
    store.acquire([bucket('tokens', 100, 90)]);
    const refused = store.acquire([bucket('requests', 10), bucket('tokens', 100, 50)]);
    expect(refused).toMatchObject({ allowed: false, refused: 1 });
    expect(refused.dims[0].remaining).toBe(10);
    expect(store.acquire([bucket('requests', 10)]).dims[0].remaining).toBe(9);
  });

  it('reports the longest wait when several dimensions refuse', () => {
    store.acquire([bucket('a', 60, 60), bucket('b', 6, 6)]);
    expect(store.acquire([bucket('a', 60), bucket('b', 6)]).retryAfterMs).toBe(10_000);
  });

  it('corrects a reservation: gives back unused tokens, up to capacity', () => {
    store.acquire([bucket('t', 1000, 800)]);
    store.adjust([bucket('t', 1000)], -700);
    expect(store.acquire([bucket('t', 1000, 0)]).dims[0].remaining).toBe(900);
    store.adjust([bucket('t', 1000)], -5000);
    expect(store.acquire([bucket('t', 1000, 0)]).dims[0].remaining).toBe(1000);
  });

  it('corrects a reservation: charges extra use as debt that delays the next request', () => {
    store.acquire([bucket('t', 600, 100)]);
    store.adjust([bucket('t', 600)], 900);
    const refused = store.acquire([bucket('t', 600, 100)]);
    expect(refused.allowed).toBe(false);
    expect(refused.dims[0].remaining).toBe(-400);
    expect(refused.retryAfterMs).toBe(50_000);
  });

  it('holds at most capacity leases until they are released', () => {
    expect(store.acquire([lease('s', 2, 'a')]).allowed).toBe(true);
    const second = store.acquire([lease('s', 2, 'b')]);
    expect(second).toMatchObject({ allowed: true, dims: [{ remaining: 0, resetMs: 0 }] });
    expect(store.acquire([lease('s', 2, 'c')])).toMatchObject({
      allowed: false,
      retryAfterMs: 1000,
    });
    store.release(lease('s', 2, 'a'));
    expect(store.acquire([lease('s', 2, 'c')]).allowed).toBe(true);
  });

  it('does not take a lease when another dimension refuses', () => {
    store.acquire([bucket('r', 1)]);
    expect(store.acquire([lease('s', 1, 'a'), bucket('r', 1)]).allowed).toBe(false);
    expect(store.acquire([lease('s', 1, 'b')]).allowed).toBe(true);
  });

  it('sweeps buckets that have refilled and keeps the others', () => {
    store.acquire([bucket('idle', 10)]);
    store.acquire([bucket('busy', 10, 10)]);
    now += 6_000;
    store.sweep();
    expect(store.size).toBe(1);
    expect(store.acquire([bucket('busy', 10, 0)]).dims[0].remaining).toBe(1);
  });

  it('serves as a @nestjs/throttler storage for a stock ThrottlerGuard', async () => {
    const options: ThrottlerModuleOptions = {
      throttlers: [{ name: 'default', ttl: MINUTE, limit: 2 }],
      getTracker: () => 'client-1',
    };
    const guard = new ThrottlerGuard(options, store, new Reflector());
    await guard.onModuleInit();
    const headers: Record<string, unknown> = {};
    const res = { header: (name: string, value: unknown) => (headers[name] = value) };
    const context = {
      getHandler: () => function handler() {},
      getClass: () => class Controller {},
      switchToHttp: () => ({ getRequest: () => ({ headers: {} }), getResponse: () => res }),
    } as unknown as ExecutionContext;
    await expect(guard.canActivate(context)).resolves.toBe(true);
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(headers['X-RateLimit-Remaining']).toBe(0);
    await expect(guard.canActivate(context)).rejects.toThrow(/Too Many Requests/);
    expect(headers['Retry-After']).toBe(30);
  });
});
