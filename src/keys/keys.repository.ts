import { type Kysely, type Selectable, sql } from 'kysely';
import { type BudgetPeriod, type KeyEndpoint, keyEndpointOf } from '../common/key-policy';
import type { ApiKeysTable, Database } from '../db/schema';
import type {
  KeyChanges,
  KeyListQuery,
  KeyRepository,
  ManagedKeyRecord,
  SecretMatch,
} from './key-record';

type KeyRow = Selectable<ApiKeysTable>;
type Secret = ManagedKeyRecord['secrets'][number];

/**
 * A stored scope's endpoints by their canonical names: rows written before the rename say
 * 'chat.completions'. A name no longer known opens nothing, as before.
 */
function canonicalEndpoints(stored: readonly string[]): KeyEndpoint[] {
  return [...new Set(stored.flatMap((name) => keyEndpointOf(name) ?? []))];
}

function toRecord(row: KeyRow, secrets: Secret[]): ManagedKeyRecord {
  return {
    id: row.id,
    name: row.name,
    owner: row.owner,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokedReason: row.revoked_reason,
    models: row.models,
    endpoints: row.endpoints === null ? null : canonicalEndpoints(row.endpoints),
    limits: row.limits,
    budget:
      row.budget_micros === null || row.budget_period === null
        ? null
        : { amountMicros: BigInt(row.budget_micros), period: row.budget_period as BudgetPeriod },
    metadata: row.metadata,
    secrets,
  };
}

/** Column values of `changes`; JSON columns are sent as text so both drivers agree. */
function columns(changes: KeyChanges): Partial<Record<keyof ApiKeysTable, unknown>> {
  const out: Partial<Record<keyof ApiKeysTable, unknown>> = {};
  if (changes.name !== undefined) {
    out.name = changes.name;
  }
  if (changes.owner !== undefined) {
    out.owner = changes.owner;
  }
  if (changes.expiresAt !== undefined) {
    out.expires_at = changes.expiresAt;
  }
  if (changes.models !== undefined) {
    out.models = changes.models === null ? null : JSON.stringify(changes.models);
  }
  if (changes.endpoints !== undefined) {
    out.endpoints = changes.endpoints === null ? null : JSON.stringify(changes.endpoints);
  }
  if (changes.limits !== undefined) {
    out.limits = JSON.stringify(changes.limits);
  }
  if (changes.budget !== undefined) {
    out.budget_micros = changes.budget === null ? null : changes.budget.amountMicros.toString();
    out.budget_period = changes.budget === null ? null : changes.budget.period;
  }
  if (changes.metadata !== undefined) {
    out.metadata = JSON.stringify(changes.metadata);
  }
  return out;
}

/** Exactly the stored columns: a caller's object may carry the secret itself. */
function secretRow(
  keyId: string,
  s: { hash: string; prefix: string; last4: string },
): { key_id: string; hash: string; prefix: string; last4: string } {
  return { key_id: keyId, hash: s.hash, prefix: s.prefix, last4: s.last4 };
}

function encodeCursor(key: ManagedKeyRecord): string {
  return Buffer.from(`${key.createdAt.toISOString()}|${key.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  return id && !Number.isNaN(date.getTime()) ? { at: date, id } : undefined;
}

/** Managed keys in PostgreSQL or PGlite, through Kysely. */
export class KyselyKeyRepository implements KeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(
    id: string,
    changes: KeyChanges & { name: string },
    secret: { hash: string; prefix: string; last4: string },
  ): Promise<ManagedKeyRecord> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('api_keys')
        .values({
          id,
          limits: '{}',
          metadata: '{}',
          updated_at: new Date(),
          ...columns(changes),
        } as never)
        .execute();
      await tx.insertInto('api_key_secrets').values(secretRow(id, secret)).execute();
    });
    const created = await this.get(id);
    if (created === undefined) {
      throw new Error(`key ${id} was not found right after it was created`);
    }
    return created;
  }

  async get(id: string): Promise<ManagedKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) {
      return undefined;
    }
    return toRecord(row, (await this.secretsOf([id])).get(id) ?? []);
  }

  async list(query: KeyListQuery, now: Date): Promise<{ keys: ManagedKeyRecord[]; next?: string }> {
    let q = this.db.selectFrom('api_keys').selectAll();
    if (query.owner !== undefined) {
      q = q.where('owner', '=', query.owner);
    }
    switch (query.status) {
      case 'revoked':
        q = q.where('revoked_at', 'is not', null);
        break;
      case 'expired':
        q = q.where('revoked_at', 'is', null).where('expires_at', '<=', now);
        break;
      case 'active':
        q = q
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
        break;
      case undefined:
        break;
    }
    const cursor = query.after === undefined ? undefined : decodeCursor(query.after);
    if (cursor) {
      q = q.where(sql<boolean>`(created_at, id) < (${cursor.at}, ${cursor.id})`);
    }
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit);
    const secrets = await this.secretsOf(page.map((r) => r.id));
    const keys = page.map((r) => toRecord(r, secrets.get(r.id) ?? []));
    return rows.length > query.limit
      ? { keys, next: encodeCursor(keys[keys.length - 1]) }
      : { keys };
  }

  async update(id: string, changes: KeyChanges, now: Date): Promise<ManagedKeyRecord | undefined> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ ...columns(changes), updated_at: now } as never)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n ? this.get(id) : undefined;
  }

  async revoke(
    id: string,
    reason: string | null,
    now: Date,
  ): Promise<ManagedKeyRecord | undefined> {
    const result = await this.db
      .updateTable('api_keys')
      .set({
        revoked_at: sql<Date>`coalesce(revoked_at, ${now})`,
        revoked_reason: reason,
        updated_at: now,
      })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n ? this.get(id) : undefined;
  }

  async rotate(
    id: string,
    secret: { hash: string; prefix: string; last4: string },
    oldUntil: Date,
    now: Date,
  ): Promise<ManagedKeyRecord | undefined> {
    const found = await this.db.transaction().execute(async (tx) => {
      const key = await tx
        .updateTable('api_keys')
        .set({ updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      if (key.numUpdatedRows === 0n) {
        return false;
      }
      // Secrets already ending sooner keep their earlier end; ended ones are removed.
      await tx
        .updateTable('api_key_secrets')
        .set({ expires_at: sql<Date>`least(coalesce(expires_at, ${oldUntil}), ${oldUntil})` })
        .where('key_id', '=', id)
        .execute();
      await tx
        .deleteFrom('api_key_secrets')
        .where('key_id', '=', id)
        .where('expires_at', '<=', now)
        .execute();
      await tx.insertInto('api_key_secrets').values(secretRow(id, secret)).execute();
      return true;
    });
    return found ? this.get(id) : undefined;
  }

  async findBySecretHash(hash: string): Promise<SecretMatch | undefined> {
    const secret = await this.db
      .selectFrom('api_key_secrets')
      .select(['key_id', 'expires_at'])
      .where('hash', '=', hash)
      .executeTakeFirst();
    if (!secret) {
      return undefined;
    }
    const key = await this.get(secret.key_id);
    return key ? { key, secretExpiresAt: secret.expires_at } : undefined;
  }

  private async secretsOf(ids: string[]): Promise<Map<string, Secret[]>> {
    const out = new Map<string, Secret[]>();
    if (ids.length === 0) {
      return out;
    }
    const rows = await this.db
      .selectFrom('api_key_secrets')
      .select(['key_id', 'prefix', 'last4', 'created_at', 'expires_at'])
      .where('key_id', 'in', ids)
      .orderBy('created_at', 'desc')
      .execute();
    for (const r of rows) {
      const list = out.get(r.key_id) ?? [];
      list.push({
        prefix: r.prefix,
        last4: r.last4,
        createdAt: r.created_at,
        expiresAt: r.expires_at,
      });
      out.set(r.key_id, list);
    }
    return out;
  }
}
