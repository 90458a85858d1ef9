/**
 * What managed keys cost (`npm run bench:keys`):
 *
 *   1. authentication in process: a static key (GATEWAY_API_KEYS) against a managed key
 *      served from the key cache, per call;
 *   2. the whole gateway over HTTP (chat completions on the local model, no upstream
 *      wait), alternating rounds with each key: the added latency of a database key once
 *      cached (every request of both keys also writes a ledger row);
 *   3. the ledger's write throughput: rows per second from the in-memory buffer into the
 *      database, in batches of 500.
 *
 * The database is DATABASE_URL's PostgreSQL (a scratch database created and dropped) or,
 * without it, an in-memory PGlite. BENCH_SCALE (0.01..1) shortens every part.
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { Kysely } from 'kysely';
import { Client } from 'pg';
import type { ConfigService } from '@nestjs/config';
import { ApiKeyService } from '../src/auth/api-key.service';
import { authenticate } from '../src/auth/authenticate';
import type { AllConfig } from '../src/config';
import { type OpenDatabase, openDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrations';
import { KeyCache } from '../src/keys/key-cache';
import type { KeyRepository, ManagedKeyRecord } from '../src/keys/key-record';
import type { LedgerRow } from '../src/usage/ledger-row';
import { LedgerWriter } from '../src/usage/ledger.writer';
import { SpendTracker } from '../src/usage/spend.tracker';
import { KyselyUsageRepository } from '../src/usage/usage.repository';
import { startGateway, TEST_KEY, writeCatalog } from '../test/support/gateway';
import { ADMIN_TOKEN, createKey } from '../test/support/key-store';
import { sha256Hex } from '../src/keys/key-secret';

const SCALE = Math.min(1, Math.max(0.01, Number(process.env.BENCH_SCALE ?? 1) || 1));
const N_AUTH = Math.round(200_000 * SCALE);
const ROUND_S = Math.max(1, Math.round(5 * SCALE));
const N_LEDGER = Math.round(50_000 * SCALE);

async function scratchDatabase(): Promise<{ url?: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    return { drop: () => Promise.resolve() };
  }
  const name = `gw_bench_${process.pid}`;
  const run = async (sql: string): Promise<void> => {
    const c = new Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function nsPerOp(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 10_000); i++) {
    fn(i); // warm-up
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    fn(i);
  }
  return Number(process.hrtime.bigint() - start) / n;
}

async function authBench(): Promise<void> {
  const config = {
    get: (ns: string) =>
      ns === 'auth' ? { apiKeys: [TEST_KEY] } : ns === 'app' ? { nodeEnv: 'test' } : undefined,
  } as unknown as ConfigService<AllConfig, true>;
  const managedSecret = `gw-${'x'.repeat(43)}`;
  const record = {
    id: 'key_bench',
    name: 'bench',
    revokedAt: null,
    expiresAt: null,
    models: ['local-*'],
    endpoints: null,
    limits: {},
    budget: null,
  } as unknown as ManagedKeyRecord;
  const repo = {
    findBySecretHash: () => Promise.resolve({ key: record, secretExpiresAt: null }),
  } as unknown as KeyRepository;
  const cache = new KeyCache(repo, 60_000);
  await cache.lookup(sha256Hex(managedSecret));
  const keys = new ApiKeyService(config, cache);
  const staticHeaders = { authorization: `Bearer ${TEST_KEY}` };
  const managedHeaders = { authorization: `Bearer ${managedSecret}` };
  {
    const s = nsPerOp(N_AUTH, () => authenticate(staticHeaders, keys));
    const m = nsPerOp(N_AUTH, () => authenticate(managedHeaders, keys));
    console.log(`\n1. authenticate() in process, ${N_AUTH} calls each`);
    console.log(`   static key   ${(s / 1000).toFixed(2)} µs/call`);
    console.log(
      `   managed key  ${(m / 1000).toFixed(2)} µs/call (cached; +${((m - s) / 1000).toFixed(2)} µs)`,
    );
  }
}

async function httpBench(databaseUrl: string | undefined): Promise<void> {
  const catalog = writeCatalog(`
providers:
  - { name: local, kind: local }
models:
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
`);
  const gw = await startGateway({
    CATALOG_PATH: catalog,
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    KEY_STORE: 'database',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: 'memory://' }),
  });
  try {
    const { key } = await createKey(gw, { name: 'bench', models: ['local-*'] });
    const body = JSON.stringify({
      model: 'local-echo-gpt',
      max_tokens: 16,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello gateway, how are you today?' },
      ],
    });
    const run = (apiKey: string, duration: number): Promise<autocannon.Result> =>
      autocannon({
        url: `${gw.baseURL}/chat/completions`,
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body,
        connections: 8,
        duration,
      });
    await run(TEST_KEY, 1);
    await run(key, 1);
    const results: Record<'static' | 'managed', autocannon.Result[]> = { static: [], managed: [] };
    for (let round = 0; round < 3; round++) {
      results.static.push(await run(TEST_KEY, ROUND_S));
      results.managed.push(await run(key, ROUND_S));
    }
    console.log(
      `\n2. POST /v1/chat/completions (local model), 8 connections, 3 x ${ROUND_S} s per key`,
    );
    for (const [name, rs] of Object.entries(results)) {
      const mean = rs.reduce((a, r) => a + r.latency.mean, 0) / rs.length;
      const p99 = rs.reduce((a, r) => a + r.latency.p99, 0) / rs.length;
      const rps = rs.reduce((a, r) => a + r.requests.average, 0) / rs.length;
      const non2xx = rs.reduce((a, r) => a + r.non2xx, 0);
      console.log(
        `   ${name.padEnd(8)} mean ${mean.toFixed(2)} ms  p99 ${p99.toFixed(2)} ms  ${rps.toFixed(0)} req/s  non-2xx ${non2xx}`,
      );
    }
  } finally {
    await gw.close();
  }
}

function row(i: number): LedgerRow {
  return {
    rowId: randomUUID(),
    createdAt: new Date(),
    requestId: `req_${i}`,
    keyId: `key_bench_${i % 50}`,
    endpoint: 'chat.completions',
    method: 'POST',
    modelRequested: 'm',
    model: `m${i % 5}`,
    provider: 'p',
    status: 200,
    outcome: 'completed',
    stream: i % 2 === 0,
    inputTokens: 1000,
    cachedInputTokens: 100,
    cacheWriteTokens: 0,
    outputTokens: 200,
    reasoningTokens: 50,
    costPico: 3_250_000_000n,
    costEstimated: false,
    protectionCostPico: 0n,
    latencyMs: 120,
    ttftMs: 30,
    protections: null,
    errorCode: null,
    team: null,
  };
}

async function ledgerBench(database: OpenDatabase): Promise<void> {
  const repo = new KyselyUsageRepository(database.db);
  const spend = new SpendTracker(repo, false);
  const writer = new LedgerWriter(repo, database.events, spend, {
    flushIntervalMs: 50,
    maxBufferedRows: N_LEDGER,
    instanceId: 'bench',
  });
  const start = process.hrtime.bigint();
  for (let i = 0; i < N_LEDGER; i++) {
    writer.enqueue(row(i));
  }
  const enqueuedMs = Number(process.hrtime.bigint() - start) / 1e6;
  await writer.flush(true);
  const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`\n3. ledger: ${N_LEDGER} rows (50 keys, 5 models), batches of 500`);
  console.log(`   enqueue (request path)  ${((enqueuedMs * 1000) / N_LEDGER).toFixed(2)} µs/row`);
  console.log(
    `   written to ${database.kind} in ${totalMs.toFixed(0)} ms: ${Math.round((N_LEDGER * 1000) / totalMs)} rows/s (dropped ${writer.snapshot().dropped})`,
  );
  await writer.close();
}

async function main(): Promise<void> {
  const scratch = await scratchDatabase();
  console.log(
    `database: ${scratch.url ? 'PostgreSQL (DATABASE_URL, scratch database)' : 'PGlite in memory'}`,
  );
  try {
    await authBench();
    await httpBench(scratch.url);
    const database = await openDatabase({
      databaseUrl: scratch.url,
      dataDir: 'memory://',
      poolSize: 4,
    });
    try {
      await migrateToLatest(database.db as unknown as Kysely<unknown>);
      await ledgerBench(database);
    } finally {
      await database.close();
    }
  } finally {
    await scratch.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
