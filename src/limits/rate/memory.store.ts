import {
  type AcquireResult,
  type BucketSpec,
  type DimensionState,
  type LeaseSpec,
  type LimitSpec,
  type RateLimitStore,
  msUntil,
  refill,
  throttlerRecord,
} from './rate-limit.store';

interface Bucket {
  level: number;
  at: number;
  capacity: number;
  windowMs: number;
}

const SWEEP_MS = 60_000;

/**
 * Counters in this process: right for one replica, and synchronous, so checking a limit
 * costs no I/O and no await. Idle buckets (full again) are swept once a minute.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = 'memory';
  private readonly buckets = new Map<string, Bucket>();
  private readonly leases = new Map<string, Set<string>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  acquire(specs: readonly LimitSpec[]): AcquireResult {
    const now = this.now();
    const levels: number[] = [];
    let refused = -1;
    let retryAfterMs = 0;
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i];
      let wait: number;
      if (spec.kind === 'bucket') {
        const b = this.buckets.get(spec.key);
        const level = b ? refill(b.level, b.at, now, spec.capacity, spec.windowMs) : spec.capacity;
        levels.push(level);
        if (level >= spec.cost) {
          continue;
        }
        wait =
          spec.cost > spec.capacity ? -1 : msUntil(level, spec.cost, spec.capacity, spec.windowMs);
      } else {
        const used = this.leases.get(spec.key)?.size ?? 0;
        levels.push(used);
        if (used < spec.capacity) {
          continue;
        }
        wait = 1000;
      }
      if (refused < 0) {
        refused = i;
      }
      retryAfterMs = retryAfterMs < 0 || wait < 0 ? -1 : Math.max(retryAfterMs, wait);
    }
    const allowed = refused < 0;
    const dims: DimensionState[] = specs.map((spec, i) => {
      if (spec.kind === 'bucket') {
        const level = allowed ? levels[i] - spec.cost : levels[i];
        if (allowed) {
          this.buckets.set(spec.key, {
            level,
            at: now,
            capacity: spec.capacity,
            windowMs: spec.windowMs,
          });
        }
        return {
          remaining: Math.floor(level),
          resetMs: msUntil(level, spec.capacity, spec.capacity, spec.windowMs),
        };
      }
      if (allowed) {
        let held = this.leases.get(spec.key);
        if (!held) {
          held = new Set();
          this.leases.set(spec.key, held);
        }
        held.add(spec.leaseId);
      }
      return { remaining: spec.capacity - levels[i] - (allowed ? 1 : 0), resetMs: 0 };
    });
    return { allowed, refused, retryAfterMs: allowed ? 0 : retryAfterMs, dims };
  }

  adjust(specs: readonly BucketSpec[], delta: number): void {
    const now = this.now();
    for (const spec of specs) {
      const b = this.buckets.get(spec.key);
      const level = b ? refill(b.level, b.at, now, spec.capacity, spec.windowMs) : spec.capacity;
      this.buckets.set(spec.key, {
        level: Math.min(spec.capacity, level - delta),
        at: now,
        capacity: spec.capacity,
        windowMs: spec.windowMs,
      });
    }
  }

  release(spec: LeaseSpec): void {
    const held = this.leases.get(spec.key);
    if (held?.delete(spec.leaseId) && held.size === 0) {
      this.leases.delete(spec.key);
    }
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<Awaited<ReturnType<RateLimitStore['increment']>>> {
    const spec: BucketSpec = {
      kind: 'bucket',
      key: `throttler:${throttlerName}:${key}`,
      capacity: limit,
      windowMs: ttl,
      cost: 1,
    };
    return Promise.resolve(throttlerRecord(this.acquire([spec]), limit));
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return Promise.resolve();
  }

  /** Drops buckets that have refilled completely: they hold no information. */
  sweep(): void {
    const now = this.now();
    for (const [key, b] of this.buckets) {
      if (refill(b.level, b.at, now, b.capacity, b.windowMs) >= b.capacity) {
        this.buckets.delete(key);
      }
    }
  }

  /** Number of live counters, for tests. */
  get size(): number {
    return this.buckets.size + this.leases.size;
  }
}
