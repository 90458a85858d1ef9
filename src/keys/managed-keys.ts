import type { ApiKeyInfo } from '../common/key-policy';

/** What the key store says about a presented secret. */
export type KeyVerdict =
  | { status: 'active'; info: ApiKeyInfo }
  | { status: 'revoked' }
  | { status: 'expired' }
  | { status: 'unknown' };

export const UNKNOWN_KEY: KeyVerdict = { status: 'unknown' };

/**
 * Keys created through the admin API, as the auth guard and the limits see them: no
 * database in sight. Lookups answer synchronously from a cache when they can; a miss
 * returns a promise, and throws KeyStoreUnavailableError when the store cannot answer.
 */
export interface ManagedKeyLookup {
  /** By the SHA-256 (hex) of the presented secret. */
  lookup(hash: string): KeyVerdict | Promise<KeyVerdict>;
  /** What the cache holds for a stored secret, without reading the store; else undefined. */
  peek(hash: string): KeyVerdict | undefined;
  /** True while the store is being read for this secret: another lookup joins that read. */
  loading(hash: string): boolean;
  /** A managed key seen recently, by id (`key_…`). */
  info(id: string): ApiKeyInfo | undefined;
}

export const MANAGED_KEYS = Symbol('MANAGED_KEYS');
