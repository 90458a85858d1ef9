import { Logger } from '@nestjs/common';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../db/schema';

/** A server-side object the gateway relayed the id of, and who may reach it. */
export interface OwnedObject {
  /** The provider's id of the object (`resp_…`, `msg_…`). */
  id: string;
  /** What the object is (`response`, `response_item`, …): one value per kind of object. */
  kind: string;
  /** The object it belongs to, deleted with it (a response's items). */
  parentId?: string;
  /** The id of the key that made it. */
  keyId: string;
  /** That key's team when it made it. */
  team?: string;
  /** The catalog provider that stores it. */
  provider: string;
  /** The catalog model it was made with. */
  model: string;
}

/**
 * The INSERT of owner records, for a statement that has a one-row `cfg` CTE setting
 * synchronous_commit (see KyselyOwnerStore.insert); the response store writes a response
 * and its records in one such statement. An id already recorded keeps its first owner.
 */
export function insertOwners(objects: readonly OwnedObject[]): RawBuilder<unknown> {
  const values = sql.join(
    objects.map(
      (o) =>
        sql`(${o.id}, ${o.kind}, ${o.parentId ?? null}, ${o.keyId}, ${o.team ?? null}, ${o.provider}, ${o.model})`,
    ),
  );
  return sql`
    INSERT INTO object_owners (id, kind, parent_id, key_id, team, provider, model)
    SELECT o.* FROM (VALUES ${values}) AS o (id, kind, parent_id, key_id, team, provider, model), cfg
    ON CONFLICT (id) DO NOTHING`;
}

/** Where owner records live: the key store's database, or this process's memory. */
export interface OwnerStore {
  /** Adds records; an id already recorded keeps its first owner. */
  insert(objects: readonly OwnedObject[]): Promise<void>;
  find(ids: readonly string[]): Promise<OwnedObject[]>;
  /** Removes the object and every object whose parent it is. */
  remove(id: string): Promise<void>;
}

/** Owner records in the `object_owners` table, shared by every replica on the database. */
export class KyselyOwnerStore implements OwnerStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(objects: readonly OwnedObject[]): Promise<void> {
    if (objects.length === 0) {
      return;
    }
    // One statement, one round trip (a stream records each output item as it starts).
    // set_config(…, true) turns synchronous_commit off for the statement's own transaction:
    // visible to every replica at commit without waiting for the disk; a record lost in a
    // database crash leaves its objects refused, never exposed. First owner wins: a later
    // claim on the same id (a colliding or replayed id) cannot take an object over.
    await sql`
      WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v)
      ${insertOwners(objects)}`.execute(this.db);
  }

  async find(ids: readonly string[]): Promise<OwnedObject[]> {
    const rows = await this.db
      .selectFrom('object_owners')
      .select(['id', 'kind', 'parent_id', 'key_id', 'team', 'provider', 'model'])
      .where('id', 'in', ids)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      ...(r.parent_id === null ? {} : { parentId: r.parent_id }),
      keyId: r.key_id,
      ...(r.team === null ? {} : { team: r.team }),
      provider: r.provider,
      model: r.model,
    }));
  }

  async remove(id: string): Promise<void> {
    await this.db
      .deleteFrom('object_owners')
      .where((eb) => eb.or([eb('id', '=', id), eb('parent_id', '=', id)]))
      .execute();
  }
}

/**
 * Owner records in memory, for KEY_STORE=off: this process only, lost on restart (the
 * objects then count as made before owners were recorded), at most `capacity` records
 * (the oldest go first, and become unreachable but for an admin key).
 */
export class MemoryOwnerStore implements OwnerStore {
  private readonly logger = new Logger(MemoryOwnerStore.name);
  private readonly records = new Map<string, OwnedObject>();
  private warned = false;

  constructor(private readonly capacity: number) {}

  insert(objects: readonly OwnedObject[]): Promise<void> {
    for (const object of objects) {
      if (!this.records.has(object.id)) {
        this.records.set(object.id, object);
      }
    }
    for (const id of this.records.keys()) {
      if (this.records.size <= this.capacity) {
        break;
      }
      this.records.delete(id);
      if (!this.warned) {
        this.warned = true;
        this.logger.warn(
          `more than ${this.capacity} stored objects recorded in memory: the oldest become unreachable (use KEY_STORE=database)`,
        );
      }
    }
    return Promise.resolve();
  }

  find(ids: readonly string[]): Promise<OwnedObject[]> {
    const found: OwnedObject[] = [];
    for (const id of ids) {
      const record = this.records.get(id);
      if (record) {
        found.push(record);
      }
    }
    return Promise.resolve(found);
  }

  remove(id: string): Promise<void> {
    this.records.delete(id);
    for (const [other, record] of this.records) {
      if (record.parentId === id) {
        this.records.delete(other);
      }
    }
    return Promise.resolve();
  }
}
