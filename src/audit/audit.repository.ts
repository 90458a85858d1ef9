import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema';
import type { AuditEntry } from './audit-entry';

/** An audit entry as stored and listed. */
export interface AuditRow {
  id: string;
  at: Date;
  actorKind: string;
  actorId: string | null;
  actorName: string | null;
  client: string | null;
  action: string;
  targetKind: string | null;
  targetId: string | null;
  team: string | null;
  change: Record<string, unknown> | null;
  outcome: string;
}

/** What a listing may narrow by; all optional, combined with AND. */
export interface AuditFilter {
  /** An actor id or name (exact). */
  actor?: string;
  /** An exact action (`key.update`) or a domain (`key.`, ending in a dot). */
  action?: string;
  /** A target id (exact). */
  target?: string;
  team?: string;
  outcome?: string;
  from?: Date;
  to?: Date;
}

/** The position after the last row of a page: newest first by (at, id). */
export interface AuditCursor {
  at: Date;
  id: string;
}

/** A row ready to insert (the entry with its defaults applied and secrets removed). */
export type AuditInsert = Required<Omit<AuditEntry, 'actor' | 'target'>> & {
  actor: { kind: string; id: string | null; name: string | null };
  target: { kind: string; id: string } | null;
};

/** The audit log's table: append, list, and the retention sweep (its only delete). */
export class AuditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async append(rows: AuditInsert[]): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    await this.db
      .insertInto('audit_log')
      .values(
        rows.map((r) => ({
          at: r.at,
          actor_kind: r.actor.kind,
          actor_id: r.actor.id,
          actor_name: r.actor.name,
          client: r.client,
          action: r.action,
          target_kind: r.target?.kind ?? null,
          target_id: r.target?.id ?? null,
          team: r.team,
          change: r.change === null ? null : JSON.stringify(r.change),
          outcome: r.outcome,
        })),
      )
      .execute();
  }

  /** Newest first; `after` continues from a previous page's last row. */
  async list(filter: AuditFilter, limit: number, after?: AuditCursor): Promise<AuditRow[]> {
    let q = this.db.selectFrom('audit_log').selectAll();
    if (filter.actor !== undefined) {
      const actor = filter.actor;
      q = q.where((eb) => eb.or([eb('actor_id', '=', actor), eb('actor_name', '=', actor)]));
    }
    if (filter.action !== undefined) {
      q = filter.action.endsWith('.')
        ? q.where(sql<boolean>`starts_with(action, ${filter.action})`)
        : q.where('action', '=', filter.action);
    }
    if (filter.target !== undefined) {
      q = q.where('target_id', '=', filter.target);
    }
    if (filter.team !== undefined) {
      q = q.where('team', '=', filter.team);
    }
    if (filter.outcome !== undefined) {
      q = q.where('outcome', '=', filter.outcome);
    }
    if (filter.from !== undefined) {
      q = q.where('at', '>=', filter.from);
    }
    if (filter.to !== undefined) {
      q = q.where('at', '<', filter.to);
    }
    if (after !== undefined) {
      // Row comparison: strictly older than the cursor, ties on time broken by id.
      q = q.where(
        sql<boolean>`(at, id) < (${after.at.toISOString()}::timestamptz, ${after.id}::bigint)`,
      );
    }
    const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => ({
      // int8 arrives as a string from pg, a number from PGlite.
      id: String(r.id as unknown as string | number),
      at: new Date(r.at),
      actorKind: r.actor_kind,
      actorId: r.actor_id,
      actorName: r.actor_name,
      client: r.client,
      action: r.action,
      targetKind: r.target_kind,
      targetId: r.target_id,
      team: r.team,
      change: r.change,
      outcome: r.outcome,
    }));
  }

  /**
   * Deletes entries older than `before`: the one delete the table's trigger lets through,
   * because this transaction says it is the sweeper.
   */
  async sweep(before: Date): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('gateway.audit_sweep', 'on', true)`.execute(trx);
      const res = await trx.deleteFrom('audit_log').where('at', '<', before).executeTakeFirst();
      return Number(res.numDeletedRows);
    });
  }
}
