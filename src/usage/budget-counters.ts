import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { BudgetPeriod } from '../common/key-policy';
import type { Database } from '../db/schema';

/** One budget in one period: a key's or a team's, from `start` (epoch ms) on. */
export interface BudgetCounterId {
  scope: 'key' | 'team';
  id: string;
  period: BudgetPeriod;
  start: number;
}

/** What a budget has spent and holds reserved in its period, in pico-dollars. */
export interface BudgetCounterState {
  spentPico: bigint;
  reservedPico: bigint;
}

const big = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);

/** The primary key of a counter as a WHERE clause (also for its reservations). */
function counterIs(c: BudgetCounterId): RawBuilder<unknown> {
  return sql`scope = ${c.scope} AND scope_id = ${c.id} AND period = ${c.period}
    AND period_start = ${new Date(c.start)}`;
}

/**
 * Budget counters and reservations in the key store's database. Every statement touches
 * one counter row and locks it for its own duration only, so statements of any number of
 * replicas serialize on that row and never deadlock (a reservation of a key and its team
 * is two statements, see BudgetReservations).
 */
export class BudgetCounters {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly includeProtections: boolean,
  ) {}

  /**
   * Creates the counter of a period if missing, starting from what the ledger already
   * holds for it: the key's daily totals, or the rows recorded for the team.
   */
  async ensure(c: BudgetCounterId): Promise<void> {
    const cost = this.includeProtections ? sql`cost_pusd + protection_cost_pusd` : sql`cost_pusd`;
    const since = new Date(c.start);
    const spent =
      c.scope === 'key'
        ? sql`SELECT coalesce(sum(${cost}), 0) FROM usage_daily
            WHERE key_id = ${c.id} AND day >= ${since.toISOString().slice(0, 10)}::date`
        : sql`SELECT coalesce(sum(${cost}), 0) FROM usage_ledger
            WHERE team = ${c.id} AND created_at >= ${since}`;
    await sql`
      INSERT INTO budget_counters (scope, scope_id, period, period_start, spent_pusd, reserved_pusd)
      SELECT ${c.scope}, ${c.id}, ${c.period}, ${since}, (${spent}), 0
      ON CONFLICT DO NOTHING`.execute(this.db);
  }

  /**
   * Reserves `amountPico` for request `reservationId` if spent + reserved + amount stays
   * within `limitPico` (and something is left, so a free request cannot pass a spent
   * budget); true when it did. The check and the increment are one UPDATE of one row.
   */
  async reserve(
    c: BudgetCounterId,
    reservationId: string,
    amountPico: bigint,
    limitPico: bigint,
    ttlMs: number,
  ): Promise<boolean> {
    const amount = amountPico.toString();
    const limit = limitPico.toString();
    const result = await sql<{ n: string | number }>`
      WITH upd AS (
        UPDATE budget_counters SET reserved_pusd = reserved_pusd + ${amount}::bigint
        WHERE ${counterIs(c)}
          AND spent_pusd + reserved_pusd + ${amount}::bigint <= ${limit}::bigint
          AND spent_pusd + reserved_pusd < ${limit}::bigint
        RETURNING scope
      ), ins AS (
        INSERT INTO budget_reservations
          (id, scope, scope_id, period, period_start, amount_pusd, expires_at)
        SELECT ${reservationId}::uuid, ${c.scope}, ${c.id}, ${c.period}, ${new Date(c.start)},
          ${amount}::bigint, now() + ${ttlMs} * interval '1 millisecond'
        FROM upd
      )
      SELECT count(*) AS n FROM upd`.execute(this.db);
    return Number(result.rows[0]?.n ?? 0) === 1;
  }

  /**
   * Ends a reservation: removes it (if it has not expired and been swept meanwhile) and
   * adds `spentPico`, the request's real cost, to the counter. Deleting the reservation
   * row is what makes the release happen once, whoever (settle or sweep) gets there first.
   */
  async settle(c: BudgetCounterId, reservationId: string, spentPico: bigint): Promise<void> {
    await sql`
      WITH gone AS (
        DELETE FROM budget_reservations WHERE id = ${reservationId}::uuid AND scope = ${c.scope}
        RETURNING amount_pusd
      )
      UPDATE budget_counters SET
        reserved_pusd = reserved_pusd - (SELECT coalesce(sum(amount_pusd), 0) FROM gone),
        spent_pusd = spent_pusd + ${spentPico.toString()}::bigint
      WHERE ${counterIs(c)}`.execute(this.db);
  }

  /**
   * Releases the expired reservations of one counter (their replica died before settling);
   * rows another statement holds are skipped, so sweeps never wait on each other. Returns
   * the pico-dollars released.
   */
  async sweep(c: BudgetCounterId): Promise<bigint> {
    const result = await sql<{ freed: string | number }>`
      WITH gone AS (
        DELETE FROM budget_reservations WHERE (id, scope) IN (
          SELECT id, scope FROM budget_reservations
          WHERE ${counterIs(c)} AND expires_at < now()
          FOR UPDATE SKIP LOCKED)
        RETURNING amount_pusd
      ), freed AS (SELECT coalesce(sum(amount_pusd), 0) AS amount FROM gone)
      UPDATE budget_counters SET reserved_pusd = reserved_pusd - (SELECT amount FROM freed)
      WHERE ${counterIs(c)}
      RETURNING (SELECT amount FROM freed)::text AS freed`.execute(this.db);
    return big(result.rows[0]?.freed);
  }

  /**
   * Moves the expiry of the reservations `ids` (requests still running on this replica) to
   * `ttlMs` from now, in one statement; an id already settled or swept matches nothing.
   */
  async renew(ids: readonly string[], ttlMs: number): Promise<void> {
    if (ids.length === 0) {
      return;
    }
    await sql`
      UPDATE budget_reservations SET expires_at = now() + ${ttlMs} * interval '1 millisecond'
      WHERE id = ANY(${ids}::uuid[])`.execute(this.db);
  }

  /** Counters that hold expired reservations (at most `limit`), for the periodic sweep. */
  async withExpired(limit: number): Promise<BudgetCounterId[]> {
    const result = await sql<{
      scope: 'key' | 'team';
      scope_id: string;
      period: BudgetPeriod;
      period_start: Date | string;
    }>`
      SELECT DISTINCT scope, scope_id, period, period_start FROM budget_reservations
      WHERE expires_at < now() LIMIT ${limit}`.execute(this.db);
    return result.rows.map((r) => ({
      scope: r.scope,
      id: r.scope_id,
      period: r.period,
      start: new Date(r.period_start).getTime(),
    }));
  }

  /** Current state of counters (absent: none reserved or spent through them yet). */
  async read(c: BudgetCounterId): Promise<BudgetCounterState | undefined> {
    const result = await sql<{ spent: string; reserved: string }>`
      SELECT spent_pusd::text AS spent, reserved_pusd::text AS reserved FROM budget_counters
      WHERE ${counterIs(c)}`.execute(this.db);
    const row = result.rows[0];
    return row && { spentPico: big(row.spent), reservedPico: big(row.reserved) };
  }
}
