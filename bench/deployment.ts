/**
 * The gateway as a real deployment runs it (the benchmark's numbers must hold with these
 * on): keys issued by the gateway and stored in PostgreSQL, the usage ledger writing a
 * row per request, metrics, and the resilience layer (two deployments of the chat model,
 * retries, a fallback model). PostgreSQL is DATABASE_URL's server, else the local one at
 * 127.0.0.1:5432; a scratch database is created for the run and dropped after it. Without
 * a reachable server the run falls back to the embedded PGlite, and says so.
 * BENCH_DB=postgres|pglite|both picks the databases of a run (benchDatabases): with `both`
 * (the default when PostgreSQL answers) the gateway of every phase runs on PostgreSQL and a
 * second one, on PGlite, joins the concurrency-1 floor rounds and the load phase, beside a
 * third with KEY_STORE=off (static keys, no ledger: keyStoreOffEnv).
 */
import { Client } from 'pg';
import { request } from 'undici';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
export const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  /** `postgresql` (a scratch database) or `pglite` (embedded, in memory). */
  kind: 'postgresql' | 'pglite';
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function run(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function benchDatabase(): Promise<BenchDatabase> {
  const server = process.env.DATABASE_URL ?? DEFAULT_SERVER;
  const name = `gw_bench_${process.pid}`;
  try {
    await run(server, `CREATE DATABASE ${name}`);
  } catch {
    return pgliteDatabase();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    kind: 'postgresql',
    env: { DATABASE_URL: url.toString() },
    drop: () => run(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined),
  };
}

/** A PGlite in memory: nothing to create or drop. */
export function pgliteDatabase(): BenchDatabase {
  return { kind: 'pglite', env: { DATA_DIR: 'memory://' }, drop: () => Promise.resolve() };
}

/** Which databases BENCH_DB asks for, the first one the main gateway's. */
export type DbChoice = 'postgres' | 'pglite' | 'both';

export function readDbChoice(raw: string | undefined): DbChoice | undefined {
  if (raw === undefined || raw === '') {
    return undefined;
  }
  if (raw !== 'postgres' && raw !== 'pglite' && raw !== 'both') {
    throw new Error(`BENCH_DB must be postgres, pglite or both, not ${raw}`);
  }
  return raw;
}

/**
 * The run's databases per BENCH_DB: the first is the main gateway's (every phase), the
 * others are variants measured at concurrency 1 and under load. Unset: both when PostgreSQL
 * answers, else PGlite alone. Asked for PostgreSQL that does not answer, the run fails
 * rather than quietly measure something else.
 */
export async function benchDatabases(
  choice = readDbChoice(process.env.BENCH_DB),
): Promise<BenchDatabase[]> {
  if (choice === 'pglite') {
    return [pgliteDatabase()];
  }
  const db = await benchDatabase();
  if (db.kind === 'pglite' && choice !== undefined) {
    throw new Error(
      `BENCH_DB=${choice}: PostgreSQL did not answer (DATABASE_URL or 127.0.0.1:5432)`,
    );
  }
  return choice === 'postgres' || db.kind === 'pglite' ? [db] : [db, pgliteDatabase()];
}

/** How a database is named in the report. */
export function dbLabel(db: BenchDatabase): string {
  return db.kind === 'postgresql' ? 'PostgreSQL' : 'PGlite';
}

/**
 * The gateway with KEY_STORE=off: static keys only (GATEWAY_API_KEYS, the bench key), no
 * ledger, no admin API; metrics and resilience as deployed. The floor of the key store.
 */
export function keyStoreOffEnv(): Record<string, string> {
  return { KEY_STORE: 'off', METRICS_TOKEN, UPSTREAM_RETRY_ATTEMPTS: '3' };
}

/** What the gateway child gets on top of the bench's own environment. */
export function deployedEnv(db: BenchDatabase): Record<string, string> {
  return {
    ...db.env,
    KEY_STORE: 'database',
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    METRICS_TOKEN,
    // The defaults, spelled out: retries (3 attempts) and the retry budget are on.
    UPSTREAM_RETRY_ATTEMPTS: '3',
  };
}

/** One request to the gateway's own API; resolves with its status and text. */
async function call(
  port: number,
  path: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  const res = await request(`http://127.0.0.1:${port}${path}`, init);
  return { status: res.statusCode, text: await res.body.text() };
}

/** Issues a key through the admin API, as the console does; returns its secret. */
export async function issueKey(port: number): Promise<string> {
  const { status, text } = await call(port, '/admin/v1/keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', owner: 'bench-team' }),
  });
  if (status !== 201) {
    throw new Error(`issuing the bench key answered ${status}: ${text.slice(0, 300)}`);
  }
  return (JSON.parse(text) as { key: string }).key;
}

/** Reads GET /metrics (with its token), so a run proves metrics were recorded. */
export async function requestsCounted(port: number): Promise<number> {
  const { text } = await call(port, '/metrics', {
    method: 'GET',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('gateway_requests_total{')) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
    }
  }
  return total;
}
