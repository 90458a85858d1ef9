import { Logger } from '@nestjs/common';
import { type ApiKeyInfo, type KeyEndpoint, ModelScope } from '../common/key-policy';
import { type KeyVerdict, type ManagedKeyLookup, UNKNOWN_KEY } from './managed-keys';
import { KeyStoreUnavailableError } from '../common/errors/gateway-errors';
import type { KeyRepository, ManagedKeyRecord, SecretMatch } from './key-record';
import { NegativeCache, type NegativeCacheOptions } from './negative-cache';

/** Stored secrets remembered at most (oldest forgotten first). */
const MAX_ENTRIES = 100_000;

const DEFAULT_NEGATIVE: NegativeCacheOptions = { ttlMs: 30_000, maxEntries: 10_000 };

interface Entry {
  verdict: KeyVerdict;
  keyId: string;
  loadedAt: number;
}

/** The auth view of a stored key. */
export function infoOf(key: ManagedKeyRecord, secretExpiresAt: Date | null): ApiKeyInfo {
  const ends = [key.expiresAt, secretExpiresAt]
    .filter((d): d is Date => d !== null)
    .map((d) => d.getTime());
  const limits: ApiKeyInfo['limits'] = {};
  if (key.limits.requests_per_minute !== undefined) {
    limits.requestsPerMinute = key.limits.requests_per_minute;
  }
  if (key.limits.tokens_per_minute !== undefined) {
    limits.tokensPerMinute = key.limits.tokens_per_minute;
  }
  if (key.limits.max_concurrent_streams !== undefined) {
    limits.maxConcurrentStreams = key.limits.max_concurrent_streams;
  }
  return {
    id: key.id,
    name: key.name,
    limits,
    modelLimits: new Map(),
    source: 'managed',
    scope: {
      models: key.models === null ? undefined : new ModelScope(key.models),
      endpoints: key.endpoints === null ? undefined : new Set<KeyEndpoint>(key.endpoints),
    },
    budget: key.budget ?? undefined,
    expiresAt: ends.length > 0 ? Math.min(...ends) : undefined,
    team: key.owner ?? undefined,
  };
}

function verdictOf(match: SecretMatch | undefined): KeyVerdict {
  if (!match) {
    return { status: 'unknown' };
  }
  if (match.key.revokedAt !== null) {
    return { status: 'revoked' };
  }
  // Expiry is checked at use time from info.expiresAt, so a cached key expires on time.
  return { status: 'active', info: infoOf(match.key, match.secretExpiresAt) };
}

/**
 * Managed keys by secret hash, in process: the request path never waits for the
 * database once a key is cached. A miss reads the database once (concurrent misses for
 * the same hash share that read). Changes arrive through `invalidate` (a notification
 * from whichever replica made them) and reload the key at once; entries older than the
 * TTL are re-read in the background while still served, as a backstop for a missed
 * notification. Secrets found in no key go to a separate, bounded negative cache for a
 * short TTL (never served stale), emptied by any key change: a key created anywhere with
 * a secret tried here before is accepted at once. When the database is unreachable,
 * cached keys keep working and an uncached one gets 503 (KeyStoreUnavailableError),
 * never a wrong 401.
 */
export class KeyCache implements ManagedKeyLookup {
  private readonly logger = new Logger('KeyCache');
  private readonly byHash = new Map<string, Entry>();
  private readonly hashesById = new Map<string, Set<string>>();
  private readonly byId = new Map<string, ApiKeyInfo>();
  /** Store reads in flight, by secret hash: concurrent lookups of one secret share one. */
  private readonly reading = new Map<string, Promise<KeyVerdict>>();
  private readonly unknown: NegativeCache;
  /** Counts key changes: a read begun before one may not negative-cache what it found. */
  private changes = 0;
  private lastFailureLog = 0;

  constructor(
    private readonly repo: KeyRepository,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    negative: NegativeCacheOptions = DEFAULT_NEGATIVE,
  ) {
    this.unknown = new NegativeCache(negative, now);
  }

  lookup(hash: string): KeyVerdict | Promise<KeyVerdict> {
    const entry = this.byHash.get(hash);
    if (entry) {
      if (this.now() - entry.loadedAt > this.ttlMs) {
        this.reloadInBackground(hash, false);
      }
      return entry.verdict;
    }
    if (this.unknown.has(hash)) {
      return UNKNOWN_KEY;
    }
    return this.load(hash).catch((err: unknown) => {
      this.logFailure(err);
      throw new KeyStoreUnavailableError();
    });
  }

  peek(hash: string): KeyVerdict | undefined {
    const entry = this.byHash.get(hash);
    if (entry && this.now() - entry.loadedAt > this.ttlMs) {
      this.reloadInBackground(hash, false);
    }
    return entry?.verdict;
  }

  loading(hash: string): boolean {
    return this.reading.has(hash);
  }

  info(id: string): ApiKeyInfo | undefined {
    return this.byId.get(id);
  }

  /**
   * A key changed (or was created) somewhere: reload each of its cached secrets now, and
   * forget every unknown secret, since the change may have given one of them a key.
   */
  invalidate(keyId: string): void {
    this.changes++;
    this.unknown.clear();
    for (const hash of this.hashesById.get(keyId) ?? []) {
      this.reloadInBackground(hash, true);
    }
  }

  /** Notifications may have been lost: every entry is re-read on its next use. */
  markAllStale(): void {
    this.changes++;
    this.unknown.clear();
    for (const entry of this.byHash.values()) {
      entry.loadedAt = 0;
    }
  }

  /** Stored secrets cached. */
  get size(): number {
    return this.byHash.size;
  }

  /** Unknown secrets remembered. */
  get unknownSize(): number {
    return this.unknown.size;
  }

  private load(hash: string): Promise<KeyVerdict> {
    let pending = this.reading.get(hash);
    if (!pending) {
      const changes = this.changes;
      pending = this.repo
        .findBySecretHash(hash)
        .then((match) => this.store(hash, verdictOf(match), match?.key.id, changes))
        .finally(() => this.reading.delete(hash));
      this.reading.set(hash, pending);
    }
    return pending;
  }

  /**
   * Re-reads an entry. On failure a background refresh keeps serving what it has (the
   * database is down; cached keys keep working), except after a change notification,
   * where the entry is dropped: a revoked key must not live on just because the reload
   * failed.
   */
  private reloadInBackground(hash: string, changed: boolean): void {
    const inFlight = this.reading.get(hash);
    if (inFlight) {
      // A read that began before the change may return the old state: read again after.
      if (changed) {
        void inFlight.catch(() => undefined).finally(() => this.reloadInBackground(hash, true));
      }
      return;
    }
    const entry = this.byHash.get(hash);
    this.load(hash).catch((err: unknown) => {
      this.logFailure(err);
      if (changed) {
        this.forget(hash);
      } else if (entry) {
        // Try again after another TTL rather than on every request.
        entry.loadedAt = this.now();
      }
    });
  }

  private store(
    hash: string,
    verdict: KeyVerdict,
    keyId: string | undefined,
    changesBefore: number,
  ): KeyVerdict {
    if (keyId === undefined) {
      // In no key (any more): out of the known keys, into the negative cache unless a key
      // changed while it was read (the answer may already be wrong).
      this.forget(hash);
      if (changesBefore === this.changes) {
        this.unknown.add(hash);
      }
      return verdict;
    }
    this.unknown.delete(hash);
    this.byHash.delete(hash);
    if (this.byHash.size >= MAX_ENTRIES) {
      const oldest = this.byHash.keys().next().value;
      if (oldest !== undefined) {
        this.forget(oldest);
      }
    }
    this.byHash.set(hash, { verdict, keyId, loadedAt: this.now() });
    let hashes = this.hashesById.get(keyId);
    if (!hashes) {
      hashes = new Set();
      this.hashesById.set(keyId, hashes);
    }
    hashes.add(hash);
    if (verdict.status === 'active') {
      this.byId.set(keyId, verdict.info);
    } else {
      this.byId.delete(keyId);
    }
    return verdict;
  }

  private forget(hash: string): void {
    const entry = this.byHash.get(hash);
    this.byHash.delete(hash);
    if (entry !== undefined) {
      const hashes = this.hashesById.get(entry.keyId);
      hashes?.delete(hash);
      if (hashes?.size === 0) {
        this.hashesById.delete(entry.keyId);
        this.byId.delete(entry.keyId);
      }
    }
  }

  private logFailure(err: unknown): void {
    // Once per 10 s: an outage would otherwise log on every uncached request.
    const now = this.now();
    if (now - this.lastFailureLog > 10_000) {
      this.lastFailureLog = now;
      this.logger.warn(`key store unreachable: ${(err as Error).message}`);
    }
  }
}
