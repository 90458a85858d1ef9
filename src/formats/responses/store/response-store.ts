import { Logger } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema';
import { type OwnedObject, insertOwners } from '../../../ownership/owner-store';
import { OwnershipUnavailableError } from '../../../ownership/object-ownership.service';

/** A response as the gateway stores it: who made it, and its JSON texts as written. */
export interface StoredResponseRow {
  id: string;
  /** The response it continues, when it was made with `previous_response_id`. */
  previousId: string | null;
  keyId: string;
  team: string | null;
  provider: string;
  /** The catalog model that answered. */
  model: string;
  /** JSON array of the request's own input items (with ids). */
  inputItems: string;
  /** JSON of the response object (reasoning payloads included). */
  response: string;
}

/** Why a chain cannot be rebuilt: too long, too large, or a link is gone. */
export type ChainResult =
  | { kind: 'ok'; rows: StoredResponseRow[] }
  | { kind: 'too_deep' | 'too_large' }
  | { kind: 'broken'; missing: string };

/** Where the gateway's own stored responses live (database or memory). */
export interface ResponseStore {
  /** Writes one response, kept until `expiresAt`, with the owner records of it and its items. */
  put(row: StoredResponseRow, expiresAt: Date, owners: readonly OwnedObject[]): Promise<void>;
  /** The response with `id` and those it continues, oldest first, within the bounds. */
  chain(id: string, maxDepth: number, maxBytes: number): Promise<ChainResult>;
  /** The unexpired responses among `ids`, in no order. */
  find(ids: readonly string[]): Promise<StoredResponseRow[]>;
  remove(id: string): Promise<void>;
  /** Deletes up to `batch` expired responses and their owner records; how many went. */
  sweep(now: Date, batch: number): Promise<number>;
}

const bytesOf = (row: StoredResponseRow): number => row.inputItems.length + row.response.length;

/**
 * Stored responses in the key store's database (`stored_responses`), shared by every
 * replica on it. A chain is one recursive query, however long.
 */
/** A read or delete the database did not answer: a 503 the client retries, not a 500. */
function unavailable(cause: unknown): never {
  throw new OwnershipUnavailableError(cause);
}

export class KyselyResponseStore implements ResponseStore {
  constructor(private readonly db: Kysely<Database>) {}

  async put(
    row: StoredResponseRow,
    expiresAt: Date,
    owners: readonly OwnedObject[],
  ): Promise<void> {
    // One statement, so one round trip: the response and its owner records commit together.
    // As the owner records elsewhere, the commit does not wait for the disk (set_config
    // local to this statement's transaction): a crash may lose the last responses, and a
    // continuation from one is then OpenAI's not-found, never another key's data.
    await sql`
      WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
      saved AS (
        INSERT INTO stored_responses
          (id, previous_id, key_id, team, provider, model, expires_at, bytes, input_items, response)
        SELECT ${row.id}, ${row.previousId}, ${row.keyId}, ${row.team}, ${row.provider},
               ${row.model}, ${expiresAt}, ${bytesOf(row)}, ${row.inputItems}, ${row.response}
        FROM cfg
        ON CONFLICT (id) DO NOTHING
      )
      ${insertOwners(owners)}`.execute(this.db);
  }

  async chain(id: string, maxDepth: number, maxBytes: number): Promise<ChainResult> {
    // Walks previous_id links from `id`; stops one row past either bound, so that a chain
    // over it is told apart from one exactly at it.
    const { rows } = await sql<{
      id: string;
      previous_id: string | null;
      key_id: string;
      team: string | null;
      provider: string;
      model: string;
      input_items: string;
      response: string;
      depth: number;
      total: string;
    }>`
      WITH RECURSIVE chain AS (
        SELECT id, previous_id, key_id, team, provider, model, input_items, response,
               1 AS depth, bytes::bigint AS total
        FROM stored_responses WHERE id = ${id} AND expires_at > now()
        UNION ALL
        SELECT s.id, s.previous_id, s.key_id, s.team, s.provider, s.model, s.input_items,
               s.response, c.depth + 1, c.total + s.bytes
        FROM stored_responses s JOIN chain c ON s.id = c.previous_id
        WHERE c.depth <= ${maxDepth} AND c.total <= ${maxBytes} AND s.expires_at > now()
      )
      SELECT * FROM chain ORDER BY depth DESC`
      .execute(this.db)
      .catch(unavailable);
    if (rows.length === 0) {
      return { kind: 'broken', missing: id };
    }
    const deepest = rows[0];
    if (deepest.depth > maxDepth) {
      return { kind: 'too_deep' };
    }
    if (Number(deepest.total) > maxBytes) {
      return { kind: 'too_large' };
    }
    if (deepest.previous_id !== null) {
      return { kind: 'broken', missing: deepest.previous_id };
    }
    return { kind: 'ok', rows: rows.map(fromRow) };
  }

  async find(ids: readonly string[]): Promise<StoredResponseRow[]> {
    if (ids.length === 0) {
      return [];
    }
    const rows = await this.db
      .selectFrom('stored_responses')
      .select([
        'id',
        'previous_id',
        'key_id',
        'team',
        'provider',
        'model',
        'input_items',
        'response',
      ])
      .where('id', 'in', ids)
      .where('expires_at', '>', sql<Date>`now()`)
      .execute()
      .catch(unavailable);
    return rows.map(fromRow);
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('stored_responses').where('id', '=', id).execute().catch(unavailable);
  }

  async sweep(now: Date, batch: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const gone = await trx
        .deleteFrom('stored_responses')
        .where(
          'id',
          'in',
          trx
            .selectFrom('stored_responses')
            .select('id')
            .where('expires_at', '<=', now)
            .limit(batch),
        )
        .returning('id')
        .execute();
      const ids = gone.map((r) => r.id);
      if (ids.length > 0) {
        await trx
          .deleteFrom('object_owners')
          .where((eb) => eb.or([eb('id', 'in', ids), eb('parent_id', 'in', ids)]))
          .execute();
      }
      return ids.length;
    });
  }
}

function fromRow(r: {
  id: string;
  previous_id: string | null;
  key_id: string;
  team: string | null;
  provider: string;
  model: string;
  input_items: string;
  response: string;
}): StoredResponseRow {
  return {
    id: r.id,
    previousId: r.previous_id,
    keyId: r.key_id,
    team: r.team,
    provider: r.provider,
    model: r.model,
    inputItems: r.input_items,
    response: r.response,
  };
}

/**
 * Stored responses in memory, for KEY_STORE=off: this process only, lost on restart, at
 * most `capacity` responses (the oldest go first). The owner records are in memory too.
 */
export class MemoryResponseStore implements ResponseStore {
  private readonly logger = new Logger(MemoryResponseStore.name);
  private readonly rows = new Map<string, { row: StoredResponseRow; expiresAt: number }>();
  private warned = false;

  /** `recordOwners`: where the owner records go (the memory owner store). */
  constructor(
    private readonly capacity: number,
    private readonly recordOwners: (owners: readonly OwnedObject[]) => Promise<void>,
  ) {}

  put(row: StoredResponseRow, expiresAt: Date, owners: readonly OwnedObject[]): Promise<void> {
    if (!this.rows.has(row.id)) {
      this.rows.set(row.id, { row, expiresAt: expiresAt.getTime() });
    }
    for (const id of this.rows.keys()) {
      if (this.rows.size <= this.capacity) {
        break;
      }
      this.rows.delete(id);
      if (!this.warned) {
        this.warned = true;
        this.logger.warn(
          `more than ${this.capacity} responses stored in memory: the oldest are dropped (use KEY_STORE=database)`,
        );
      }
    }
    return this.recordOwners(owners);
  }

  chain(id: string, maxDepth: number, maxBytes: number): Promise<ChainResult> {
    const rows: StoredResponseRow[] = [];
    let total = 0;
    let next: string | null = id;
    while (next !== null) {
      const row = this.live(next);
      if (row === undefined) {
        return Promise.resolve({ kind: 'broken', missing: next });
      }
      rows.push(row);
      total += bytesOf(row);
      if (rows.length > maxDepth) {
        return Promise.resolve({ kind: 'too_deep' });
      }
      if (total > maxBytes) {
        return Promise.resolve({ kind: 'too_large' });
      }
      next = row.previousId;
    }
    return Promise.resolve({ kind: 'ok', rows: rows.reverse() });
  }

  find(ids: readonly string[]): Promise<StoredResponseRow[]> {
    const found: StoredResponseRow[] = [];
    for (const id of new Set(ids)) {
      const row = this.live(id);
      if (row !== undefined) {
        found.push(row);
      }
    }
    return Promise.resolve(found);
  }

  remove(id: string): Promise<void> {
    this.rows.delete(id);
    return Promise.resolve();
  }

  sweep(now: Date, batch: number): Promise<number> {
    let swept = 0;
    for (const [id, entry] of this.rows) {
      if (swept >= batch) {
        break;
      }
      if (entry.expiresAt <= now.getTime()) {
        this.rows.delete(id);
        swept++;
      }
    }
    return Promise.resolve(swept);
  }

  private live(id: string): StoredResponseRow | undefined {
    const entry = this.rows.get(id);
    return entry !== undefined && entry.expiresAt > Date.now() ? entry.row : undefined;
  }
}
