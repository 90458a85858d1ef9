import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { ACQUIRE, ADJUST, RENEW } from './redis.scripts';
import {
  type AcquireResult,
  type BucketSpec,
  type LeaseSpec,
  type LimitSpec,
  type RateLimitStore,
  throttlerRecord,
} from './rate-limit.store';

export interface RedisStoreOptions {
  url: string;
  /** A command slower than this fails (and the caller applies its fail mode). */
  commandTimeoutMs: number;
  /** A lease not renewed for this long is dropped (its replica died mid-stream). */
  leaseTtlMs?: number;
  /** Errors of background work (connection, usage corrections, releases). */
  onError(operation: string, err: unknown): void;
}

const CONNECT_TIMEOUT_MS = 1000;
const RENEW_BATCH = 500;

class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

const SCRIPTS = {
  acquire: new Script(ACQUIRE),
  adjust: new Script(ADJUST),
  renew: new Script(RENEW),
};

/**
 * Counters in Redis, shared by every replica; each decision is one Lua script (one round
 * trip, atomic). Built never to hang a request: no offline queue (a command while
 * disconnected fails at once), no retries of in-flight commands, a command timeout, and
 * reconnection in the background. Stream leases are renewed every third of their ttl, so
 * the leases of a replica that died expire instead of blocking the key forever.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis';
  private readonly redis: Redis;
  private readonly leaseTtlMs: number;
  private readonly held = new Map<string, LeaseSpec>();
  private readonly renewer: NodeJS.Timeout;

  constructor(private readonly options: RedisStoreOptions) {
    this.leaseTtlMs = options.leaseTtlMs ?? 60_000;
    this.redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      enableAutoPipelining: true,
    });
    this.redis.on('error', (err) => options.onError('connection', err));
    this.renewer = setInterval(() => this.renewLeases(), Math.ceil(this.leaseTtlMs / 3));
    this.renewer.unref();
  }

  acquire(specs: readonly LimitSpec[]): Promise<AcquireResult> {
    const keys: string[] = [];
    const args: (string | number)[] = [this.leaseTtlMs];
    for (const spec of specs) {
      keys.push(spec.key);
      if (spec.kind === 'bucket') {
        args.push('b', spec.capacity, spec.cost, spec.windowMs);
      } else {
        args.push('l', spec.capacity, spec.leaseId, '');
      }
    }
    return this.run(SCRIPTS.acquire, keys, args).then((reply) => {
      const r = reply as number[];
      const allowed = r[0] === 0;
      if (allowed) {
        for (const spec of specs) {
          if (spec.kind === 'lease') {
            this.held.set(spec.leaseId, spec);
          }
        }
      }
      return {
        allowed,
        refused: r[0] - 1,
        retryAfterMs: allowed ? 0 : r[1],
        dims: specs.map((_, i) => ({ remaining: r[3 + i * 2], resetMs: r[4 + i * 2] })),
      };
    });
  }

  adjust(specs: readonly BucketSpec[], delta: number): void {
    const args: (string | number)[] = [delta];
    for (const spec of specs) {
      args.push(spec.capacity, spec.windowMs);
    }
    this.run(
      SCRIPTS.adjust,
      specs.map((s) => s.key),
      args,
    ).catch((err: unknown) => this.options.onError('adjust', err));
  }

  release(spec: LeaseSpec): void {
    this.held.delete(spec.leaseId);
    this.redis
      .zrem(spec.key, spec.leaseId)
      .catch((err: unknown) => this.options.onError('release', err));
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): ReturnType<RateLimitStore['increment']> {
    const spec: BucketSpec = {
      kind: 'bucket',
      key: `throttler:${throttlerName}:${key}`,
      capacity: limit,
      windowMs: ttl,
      cost: 1,
    };
    return this.acquire([spec]).then((result) => throttlerRecord(result, limit));
  }

  /** Waits (bounded) for the first connection, so the first requests do not fail open. */
  ready(): Promise<void> {
    if (this.redis.status === 'ready') {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS * 2);
      this.redis.once('ready', done);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.renewer);
    if (this.redis.status === 'ready') {
      // A clean QUIT when Redis answers, but never wait on it for long.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.redis.quit().catch(() => undefined),
        new Promise((resolve) => (timer = setTimeout(resolve, this.options.commandTimeoutMs))),
      ]);
      clearTimeout(timer);
    }
    this.redis.disconnect();
  }

  /** The underlying client, for tests and the benchmark. */
  get client(): Redis {
    return this.redis;
  }

  private run(script: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.redis.evalsha(script.sha, keys.length, ...keys, ...args).catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
        return this.redis.eval(script.source, keys.length, ...keys, ...args);
      }
      throw err;
    });
  }

  private renewLeases(): void {
    const leases = [...this.held.values()];
    for (let i = 0; i < leases.length; i += RENEW_BATCH) {
      const batch = leases.slice(i, i + RENEW_BATCH);
      this.run(
        SCRIPTS.renew,
        batch.map((l) => l.key),
        [this.leaseTtlMs, ...batch.map((l) => l.leaseId)],
      ).catch((err: unknown) => this.options.onError('renew', err));
    }
  }
}
