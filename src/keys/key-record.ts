import type { BudgetPeriod, KeyEndpoint } from '../common/key-policy';

/** Rate-limit overrides as stored and as the admin API shows them (0: unlimited). */
export interface StoredLimits {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  max_concurrent_streams?: number;
}

/** A managed key as stored (never its secret). */
export interface ManagedKeyRecord {
  id: string;
  name: string;
  owner: string | null;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revokedReason: string | null;
  /** Exact ids and globs; null: every model. */
  models: string[] | null;
  /** null: every endpoint. */
  endpoints: KeyEndpoint[] | null;
  limits: StoredLimits;
  budget: { amountMicros: bigint; period: BudgetPeriod } | null;
  metadata: Record<string, string>;
  /** Secrets in use, newest first (a rotated one lives on until its grace period ends). */
  secrets: { prefix: string; last4: string; createdAt: Date; expiresAt: Date | null }[];
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export function statusOf(
  key: Pick<ManagedKeyRecord, 'revokedAt' | 'expiresAt'>,
  now: number,
): KeyStatus {
  if (key.revokedAt !== null) {
    return 'revoked';
  }
  return key.expiresAt !== null && key.expiresAt.getTime() <= now ? 'expired' : 'active';
}

/** Fields a create or an update sets; undefined leaves a field as it is. */
export interface KeyChanges {
  name?: string;
  owner?: string | null;
  expiresAt?: Date | null;
  models?: string[] | null;
  endpoints?: KeyEndpoint[] | null;
  limits?: StoredLimits;
  budget?: { amountMicros: bigint; period: BudgetPeriod } | null;
  metadata?: Record<string, string>;
}

export interface KeyListQuery {
  owner?: string;
  status?: KeyStatus;
  limit: number;
  /** Opaque cursor from the previous page. */
  after?: string;
}

/** What authenticating a secret needs: the key and the secret's own expiry. */
export interface SecretMatch {
  key: ManagedKeyRecord;
  secretExpiresAt: Date | null;
}

/** Storage of managed keys; the Kysely implementation runs on PostgreSQL and PGlite. */
export interface KeyRepository {
  create(
    id: string,
    changes: KeyChanges & { name: string },
    secret: { hash: string; prefix: string; last4: string },
  ): Promise<ManagedKeyRecord>;
  get(id: string): Promise<ManagedKeyRecord | undefined>;
  list(query: KeyListQuery, now: Date): Promise<{ keys: ManagedKeyRecord[]; next?: string }>;
  update(id: string, changes: KeyChanges, now: Date): Promise<ManagedKeyRecord | undefined>;
  revoke(id: string, reason: string | null, now: Date): Promise<ManagedKeyRecord | undefined>;
  /** Adds a secret; the others stop working at `oldUntil` (now: at once). */
  rotate(
    id: string,
    secret: { hash: string; prefix: string; last4: string },
    oldUntil: Date,
    now: Date,
  ): Promise<ManagedKeyRecord | undefined>;
  findBySecretHash(hash: string): Promise<SecretMatch | undefined>;
}

export const KEY_REPOSITORY = Symbol('KEY_REPOSITORY');
