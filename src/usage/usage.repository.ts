import { type Kysely, type RawBuilder, sql } from 'kysely';
import { InvalidRequestError } from '../common/errors/gateway-errors';
import { isRowId } from '../db/row-id';
import type { Database } from '../db/schema';
import type {
  LedgerPage,
  LedgerRow,
  Outcome,
  SpendQuery,
  UsageFilter,
  UsageGroup,
  UsageRepository,
  UsageTotals,
} from './ledger-row';

const GROUP_EXPRESSIONS: Record<UsageGroup, RawBuilder<string>> = {
  key: sql<string>`key_id`,
  team: sql<string>`coalesce(team, '')`,
  model: sql<string>`coalesce(model, model_requested, '')`,
  day: sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  hour: sql<string>`to_char(date_trunc('hour', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:00:00"Z"')`,
};

const num = (v: unknown): number => Number(v ?? 0);
const big = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);

/**
 * A batch goes to the database as one JSON parameter, read back by `jsonb_to_recordset`
 * with LedgerRow's own field names as columns. One `JSON.stringify` replaces 25 bound
 * parameters per row: a 500-row flush was 12,500 parameters for Kysely to compile and pg
 * to serialise one by one, milliseconds of the event loop that showed in the tail latency.
 */
const BATCH_RECORD = sql.raw(`r("rowId" uuid, "createdAt" timestamptz, "requestId" text,
  "keyId" text, endpoint text, method text, "modelRequested" text, model text, provider text,
  status int, outcome text, stream boolean, "inputTokens" int, "cachedInputTokens" int,
  "cacheWriteTokens" int, "outputTokens" int, "reasoningTokens" int, "costPico" bigint,
  "costEstimated" boolean, "protectionCostPico" bigint, "latencyMs" int, "ttftMs" int,
  protections text, "errorCode" text, team text)`);

/**
 * The batch as JSON. JSON has no bigint: amounts travel as decimal strings, which bigint
 * columns parse (a spread copy per row keeps JSON.stringify on its fast path, which a
 * replacer function would leave). Text PostgreSQL refuses, NUL and lone UTF-16 surrogates,
 * can come from a client or an upstream and would fail its batch on every retry: in the
 * JSON both are `\u` escapes (a pair that belongs together is written as is), so they
 * become U+FFFD there, unless the backslash before them is itself escaped.
 */
function batchJson(rows: LedgerRow[]): string {
  const json = JSON.stringify(
    rows.map((r) => ({
      ...r,
      costPico: r.costPico.toString(),
      protectionCostPico: r.protectionCostPico.toString(),
    })),
  );
  return json.includes('\\u') ? json.replace(REFUSED_ESCAPE, '$1\\ufffd') : json;
}

/** `\u0000` or a surrogate escape, after an even run of backslashes (`$1`). */
const REFUSED_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;

/** Where a listing stands: the last row given (UTC time to the microsecond, id), and the top id. */
interface LedgerCursor {
  at: string;
  id: string;
  top: string;
}

const CURSOR_SHAPE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)\|(\d{1,19})\|(\d{1,19})$/;

/** Opaque to clients: base64url of `time|id|top`. */
function encodeLedgerCursor(c: LedgerCursor): string {
  return Buffer.from(`${c.at}|${c.id}|${c.top}`).toString('base64url');
}

/**
 * A cursor this code wrote, or a 400: starting over from the newest row on a cursor it
 * cannot read (an old numeric one included) would hand the client rows it already has.
 */
function decodeLedgerCursor(raw: string): LedgerCursor {
  const match = CURSOR_SHAPE.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  const cursor = match === null ? undefined : { at: match[1], id: match[2], top: match[3] };
  // Round trip: what the database would refuse (February 30, an id past int8) is a 400 here.
  if (
    cursor === undefined ||
    !isTimestamp(cursor.at) ||
    !isRowId(cursor.id) ||
    !isRowId(cursor.top) ||
    encodeLedgerCursor(cursor) !== raw
  ) {
    throw new InvalidRequestError(
      "Invalid 'after': pass the next_cursor of the previous page unchanged.",
      'after',
      'invalid_cursor',
    );
  }
  return cursor;
}

/** A UTC time to the microsecond that names a real instant (its milliseconds re-encode alike). */
function isTimestamp(at: string): boolean {
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 23) === at.slice(0, 23);
}

function ledgerRowOf(r: Record<string, unknown>): LedgerRow & { id: string } {
  return {
    id: r.ledger_id as string,
    rowId: r.row_id as string,
    createdAt: r.created_at as Date,
    requestId: r.request_id as string,
    keyId: r.key_id as string,
    team: r.team as string | null,
    endpoint: r.endpoint as string,
    method: r.method as string,
    modelRequested: r.model_requested as string | null,
    model: r.model as string | null,
    provider: r.provider as string | null,
    status: num(r.status),
    outcome: r.outcome as Outcome,
    stream: r.stream as boolean,
    inputTokens: num(r.input_tokens),
    cachedInputTokens: num(r.cached_input_tokens),
    cacheWriteTokens: num(r.cache_write_tokens),
    outputTokens: num(r.output_tokens),
    reasoningTokens: num(r.reasoning_tokens),
    costPico: big(r.cost_pusd),
    costEstimated: r.cost_estimated as boolean,
    protectionCostPico: big(r.protection_cost_pusd),
    latencyMs: num(r.latency_ms),
    ttftMs: r.ttft_ms === null ? null : num(r.ttft_ms),
    protections: r.protections as string | null,
    errorCode: r.error_code as string | null,
  };
}

/** The ledger in PostgreSQL or PGlite, through Kysely. */
export class KyselyUsageRepository implements UsageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * One statement: the rows, their daily totals and the keys' last-used times change
   * together or not at all, and a row already stored (a retried batch) counts once.
   */
  async insert(rows: LedgerRow[]): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    await sql`
      WITH ins AS (
        INSERT INTO usage_ledger (row_id, created_at, request_id, key_id, endpoint, method,
          model_requested, model, provider, status, outcome, stream, input_tokens,
          cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_pusd,
          cost_estimated, protection_cost_pusd, latency_ms, ttft_ms, protections, error_code, team)
        SELECT "rowId", "createdAt", "requestId", "keyId", endpoint, method, "modelRequested",
          model, provider, status, outcome, stream, "inputTokens", "cachedInputTokens",
          "cacheWriteTokens", "outputTokens", "reasoningTokens", "costPico", "costEstimated",
          "protectionCostPico", "latencyMs", "ttftMs", protections, "errorCode", team
        FROM jsonb_to_recordset(${batchJson(rows)}::jsonb) AS ${BATCH_RECORD}
        ON CONFLICT (row_id) DO NOTHING
        RETURNING *
      ), daily AS (
        INSERT INTO usage_daily AS d (key_id, day, model, requests, errors, input_tokens,
          cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_pusd,
          protection_cost_pusd)
        SELECT key_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(model, ''), count(*),
          count(*) FILTER (WHERE outcome <> 'completed'), sum(input_tokens),
          sum(cached_input_tokens), sum(cache_write_tokens), sum(output_tokens),
          sum(reasoning_tokens), sum(cost_pusd), sum(protection_cost_pusd)
        FROM ins GROUP BY 1, 2, 3
        ON CONFLICT (key_id, day, model) DO UPDATE SET
          requests = d.requests + excluded.requests,
          errors = d.errors + excluded.errors,
          input_tokens = d.input_tokens + excluded.input_tokens,
          cached_input_tokens = d.cached_input_tokens + excluded.cached_input_tokens,
          cache_write_tokens = d.cache_write_tokens + excluded.cache_write_tokens,
          output_tokens = d.output_tokens + excluded.output_tokens,
          reasoning_tokens = d.reasoning_tokens + excluded.reasoning_tokens,
          cost_pusd = d.cost_pusd + excluded.cost_pusd,
          protection_cost_pusd = d.protection_cost_pusd + excluded.protection_cost_pusd
      )
      UPDATE api_keys AS k SET last_used_at = greatest(k.last_used_at, u.at)
      FROM (SELECT key_id, max(created_at) AS at FROM ins GROUP BY key_id) AS u
      WHERE k.id = u.key_id`.execute(this.db);
  }

  async totals(filter: UsageFilter, group: UsageGroup | undefined): Promise<UsageTotals[]> {
    const groupExpr = group === undefined ? sql<string | null>`NULL` : GROUP_EXPRESSIONS[group];
    const result = await sql<Record<string, unknown>>`
      SELECT ${groupExpr} AS grp, count(*) AS requests,
        count(*) FILTER (WHERE outcome <> 'completed') AS errors,
        coalesce(sum(input_tokens), 0)::text AS input_tokens,
        coalesce(sum(cached_input_tokens), 0)::text AS cached_input_tokens,
        coalesce(sum(cache_write_tokens), 0)::text AS cache_write_tokens,
        coalesce(sum(output_tokens), 0)::text AS output_tokens,
        coalesce(sum(reasoning_tokens), 0)::text AS reasoning_tokens,
        coalesce(sum(cost_pusd), 0)::text AS cost,
        coalesce(sum(cost_pusd) FILTER (WHERE cost_estimated), 0)::text AS estimated_cost,
        coalesce(sum(protection_cost_pusd), 0)::text AS protection_cost
      FROM usage_ledger
      WHERE ${this.where(filter)}
      ${group === undefined ? sql`` : sql`GROUP BY 1 ORDER BY 1`}`.execute(this.db);
    return result.rows.map((r) => ({
      group: (r.grp as string | null) ?? null,
      requests: num(r.requests),
      errors: num(r.errors),
      inputTokens: num(r.input_tokens),
      cachedInputTokens: num(r.cached_input_tokens),
      cacheWriteTokens: num(r.cache_write_tokens),
      outputTokens: num(r.output_tokens),
      reasoningTokens: num(r.reasoning_tokens),
      costPico: big(r.cost),
      estimatedCostPico: big(r.estimated_cost),
      protectionCostPico: big(r.protection_cost),
    }));
  }

  /**
   * One page of rows, newest first by (created_at, id): a key no insert can reorder, unlike
   * the request id (text) or the identity alone (a buffered batch is written after newer
   * rows). The first page also fixes the highest id then stored; later pages keep below
   * it, so rows written while a listing runs (backdated ones included) stay out of it.
   */
  async requests(filter: UsageFilter, limit: number, after?: string): Promise<LedgerPage> {
    const cursor = after === undefined ? undefined : decodeLedgerCursor(after);
    // Same statement, same snapshot: no row of the first page is above the top it reports.
    const top = cursor === undefined ? sql`(SELECT max(id) FROM usage_ledger)` : sql`NULL`;
    const below =
      cursor === undefined
        ? sql``
        : sql`AND (created_at, id) < (${cursor.at}::timestamptz, ${cursor.id}::bigint)
            AND id <= ${cursor.top}::bigint`;
    const result = await sql<Record<string, unknown>>`
      SELECT id::text AS ledger_id, row_id::text AS row_id, created_at,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key,
        ${top}::text AS top,
        request_id, key_id, endpoint, method, model_requested, model, provider, status,
        outcome, stream, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens,
        reasoning_tokens, cost_pusd::text AS cost_pusd, cost_estimated,
        protection_cost_pusd::text AS protection_cost_pusd, latency_ms, ttft_ms, protections,
        error_code, team
      FROM usage_ledger
      WHERE ${this.where(filter)} ${below}
      ORDER BY usage_ledger.created_at DESC, usage_ledger.id DESC
      LIMIT ${limit + 1}`.execute(this.db);
    const rows = result.rows.slice(0, limit).map(ledgerRowOf);
    if (result.rows.length <= limit) {
      return { rows };
    }
    const last = result.rows[limit - 1];
    return {
      rows,
      next: encodeLedgerCursor({
        at: last.at_key as string,
        id: last.ledger_id as string,
        top: cursor?.top ?? (result.rows[0].top as string),
      }),
    };
  }

  async spend(query: SpendQuery): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    if (query.keyIds.length === 0) {
      return out;
    }
    const since = query.since.toISOString().slice(0, 10);
    const total = query.includeProtections
      ? sql`sum(cost_pusd + protection_cost_pusd)`
      : sql`sum(cost_pusd)`;
    const result = await sql<{ key_id: string; spent: string }>`
      SELECT key_id, ${total}::text AS spent FROM usage_daily
      WHERE key_id IN (${sql.join(query.keyIds)}) AND day >= ${since}::date
      GROUP BY key_id`.execute(this.db);
    for (const r of result.rows) {
      out.set(r.key_id, BigInt(r.spent));
    }
    return out;
  }

  async prune(before: Date): Promise<number> {
    let total = 0;
    // In slices, so a long-neglected table is not cleaned in one huge transaction.
    for (;;) {
      const result = await sql`
        DELETE FROM usage_ledger WHERE id IN (
          SELECT id FROM usage_ledger WHERE created_at < ${before} LIMIT 10000)`.execute(this.db);
      const n = Number(result.numAffectedRows ?? 0n);
      total += n;
      if (n < 10000) {
        return total;
      }
    }
  }

  private where(filter: UsageFilter): RawBuilder<unknown> {
    const parts = [sql`created_at >= ${filter.from}`, sql`created_at < ${filter.to}`];
    if (filter.keyId !== undefined) {
      parts.push(sql`key_id = ${filter.keyId}`);
    }
    if (filter.team !== undefined) {
      parts.push(sql`team = ${filter.team}`);
    }
    if (filter.model !== undefined) {
      parts.push(sql`coalesce(model, model_requested) = ${filter.model}`);
    }
    return sql.join(parts, sql` AND `);
  }
}
