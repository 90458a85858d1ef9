/**
 * The gateway as a real deployment runs it (the benchmark's numbers must hold with these
 * on): keys issued by the gateway and stored in PostgreSQL, the usage ledger writing a
 * row per request, metrics, and the resilience layer (two deployments of the chat model,
 * retries, a fallback model). PostgreSQL is DATABASE_URL's server, else the local one at
 * 127.0.0.1:5432; a scratch database is created for the run and dropped after it. Without
 * a reachable server the run falls back to the embedded PGlite, and says so.
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
    return { kind: 'pglite', env: { DATA_DIR: 'memory://' }, drop: () => Promise.resolve() };
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    kind: 'postgresql',
    env: { DATABASE_URL: url.toString() },
    drop: () => run(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined),
  };
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
