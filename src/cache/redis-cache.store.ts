import { Redis } from 'ioredis';
import type { CacheStore } from './cache-store';

export interface RedisCacheStoreOptions {
  url: string;
  /** Every key starts with it (RESPONSE_CACHE_KEY_PREFIX). */
  prefix: string;
  /** A command slower than this fails: the request goes upstream instead of waiting. */
  commandTimeoutMs: number;
  onError(operation: string, err: unknown): void;
}

const CONNECT_TIMEOUT_MS = 1000;

/**
 * Entries in Redis, shared by every replica: one GET per lookup, one SET with its ttl per
 * store. Like the rate-limit store it never makes a request wait on a Redis that is away
 * (no offline queue, no retries, a command timeout); a failed lookup is a miss.
 */
export class RedisCacheStore implements CacheStore {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(private readonly options: RedisCacheStoreOptions) {
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
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.options.prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.options.prefix + key, value, 'PX', ttlMs);
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
