import { LRUCache } from 'lru-cache';

/** Where cached answers live: serialized entries by key, each with its own ttl. */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  /** The entry, or undefined when there is none (or it expired); memory answers synchronously. */
  get(key: string): string | undefined | Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): void | Promise<void>;
  close(): Promise<void>;
}

export const CACHE_STORE = Symbol('CACHE_STORE');

/**
 * Entries in this process, bounded by their total size and their number; the least
 * recently used go first, and an expired entry is never returned.
 */
export class MemoryCacheStore implements CacheStore {
  readonly kind = 'memory';
  private readonly lru: LRUCache<string, string>;

  constructor(maxBytes: number, maxEntries: number) {
    this.lru = new LRUCache<string, string>({
      max: maxEntries,
      maxSize: maxBytes,
      // UTF-16 code units, the size a JS string holds in memory at most (2 bytes each).
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
    });
  }

  get(key: string): string | undefined {
    return this.lru.get(key);
  }

  set(key: string, value: string, ttlMs: number): void {
    this.lru.set(key, value, { ttl: ttlMs });
  }

  /** Bytes and entries held, for the metrics. */
  get usage(): { bytes: number; entries: number } {
    return { bytes: this.lru.calculatedSize, entries: this.lru.size };
  }

  close(): Promise<void> {
    this.lru.clear();
    return Promise.resolve();
  }
}
