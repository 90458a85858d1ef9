/** How long and how many secrets found in no key the cache remembers. */
export interface NegativeCacheOptions {
  /** 0 turns the negative cache off. */
  ttlMs: number;
  maxEntries: number;
}

/**
 * Digests of secrets the store does not hold, remembered briefly so that the same wrong
 * key sent again and again costs one read per TTL. Kept apart from the known keys: a flood
 * of guesses evicts only other guesses (oldest first), never a real key. One TTL for all,
 * so insertion order is expiry order and the oldest entry is always the first to go.
 */
export class NegativeCache {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly options: NegativeCacheOptions,
    private readonly now: () => number,
  ) {}

  /** Whether `hash` was found unknown less than a TTL ago. */
  has(hash: string): boolean {
    const until = this.expiries.get(hash);
    if (until === undefined) {
      return false;
    }
    if (until > this.now()) {
      return true;
    }
    this.expiries.delete(hash);
    return false;
  }

  add(hash: string): void {
    if (this.options.ttlMs <= 0 || this.options.maxEntries <= 0) {
      return;
    }
    this.expiries.delete(hash);
    while (this.expiries.size >= this.options.maxEntries) {
      const oldest = this.expiries.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.expiries.delete(oldest);
    }
    this.expiries.set(hash, this.now() + this.options.ttlMs);
  }

  delete(hash: string): void {
    this.expiries.delete(hash);
  }

  clear(): void {
    this.expiries.clear();
  }

  get size(): number {
    return this.expiries.size;
  }
}
