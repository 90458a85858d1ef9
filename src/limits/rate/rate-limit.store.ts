import type { ThrottlerStorage } from '@nestjs/throttler';

/** Every rate here is "per minute": a bucket refills its whole capacity in this time. */
export const WINDOW_MS = 60_000;

/**
 * A token bucket: `capacity` units, refilled continuously at capacity per window; a
 * request takes `cost` units (1 for requests, its token estimate for tokens). Unlike a
 * fixed window it allows no double burst at a window edge, and "time until full" is
 * exactly what the OpenAI and Anthropic reset headers mean.
 */
export interface BucketSpec {
  kind: 'bucket';
  key: string;
  capacity: number;
  windowMs: number;
  cost: number;
}

/** A slot among `capacity` concurrent ones (streams), held until released. */
export interface LeaseSpec {
  kind: 'lease';
  key: string;
  capacity: number;
  leaseId: string;
}

export type LimitSpec = BucketSpec | LeaseSpec;

/** State of one spec after the decision (after taking its cost when allowed). */
export interface DimensionState {
  /** Units left (may be negative for a bucket in debt after a usage correction). */
  remaining: number;
  /** Milliseconds until the bucket is full again (0 for leases). */
  resetMs: number;
}

export interface AcquireResult {
  allowed: boolean;
  /** Index of the first spec that refused; -1 when allowed. */
  refused: number;
  /**
   * When refused: milliseconds until every refusing spec could admit the request, or -1
   * when one never can (the cost is larger than the capacity).
   */
  retryAfterMs: number;
  dims: DimensionState[];
}

/**
 * Where the counters live. Decisions over several specs are atomic: all are taken or none.
 * The in-memory store answers synchronously; the Redis one returns promises. Both are
 * also `@nestjs/throttler` storages, so a stock `ThrottlerGuard` can count in them.
 */
export interface RateLimitStore extends ThrottlerStorage {
  readonly kind: 'memory' | 'redis';
  acquire(specs: readonly LimitSpec[]): AcquireResult | Promise<AcquireResult>;
  /** Adds `delta` units of use to the buckets (negative gives back); fire and forget. */
  adjust(specs: readonly BucketSpec[], delta: number): void;
  /** Frees a lease taken by `acquire`; fire and forget. */
  release(spec: LeaseSpec): void;
  /** Resolves once the store can serve (or gave up waiting); never rejects. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

/** Bucket level at `now`, refilled since `at` (level may start below zero: debt). */
export function refill(
  level: number,
  at: number,
  now: number,
  capacity: number,
  windowMs: number,
): number {
  return now > at ? Math.min(capacity, level + ((now - at) * capacity) / windowMs) : level;
}

/** Milliseconds until a bucket at `level` holds `target` units. */
export function msUntil(level: number, target: number, capacity: number, windowMs: number): number {
  return level >= target ? 0 : Math.ceil(((target - level) * windowMs) / capacity);
}

/** Maps one unit-cost bucket decision onto `@nestjs/throttler`'s storage record. */
export function throttlerRecord(
  result: AcquireResult,
  limit: number,
): Awaited<ReturnType<ThrottlerStorage['increment']>> {
  const dim = result.dims[0];
  return {
    totalHits: Math.max(0, Math.ceil(limit - dim.remaining)),
    timeToExpire: Math.ceil(dim.resetMs / 1000),
    isBlocked: !result.allowed,
    timeToBlockExpire: result.allowed ? 0 : Math.ceil(Math.max(result.retryAfterMs, 0) / 1000),
  };
}
