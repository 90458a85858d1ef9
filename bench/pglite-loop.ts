/**
 * What the embedded database costs the event loop (`npx ts-node --transpile-only
 * bench/pglite-loop.ts`): the same steady load on PGlite run on the main thread (the old
 * code path, kysely-pglite-dialect, kept only here) and on PGlite in its worker thread (as
 * the gateway opens it). For each:
 *
 *   1. event-loop delay (perf_hooks.monitorEventLoopDelay, p50/p99/max) while the ledger
 *      flushes a batch every USAGE_FLUSH_INTERVAL_MS (200 ms, 100 rows: 500 req/s), key
 *      lookups miss the cache at 100/s and an admin usage total runs each second;
 *      a run with no database at all gives the monitor's own floor;
 *   2. the time of one key lookup (two statements) and of one `SELECT 1`, alone, one
 *      after the other: the round trip the worker adds.
 *
 * BENCH_SECONDS (default 10) sets the length of part 1. Each mode gets a fresh copy of
 * the test template cluster, so no initdb is timed.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, sql } from 'kysely';
import { type Database } from '../src/db/schema';
import { openDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrations';

import { KyselyKeyRepository } from '../src/keys/keys.repository';
import type { LedgerRow } from '../src/usage/ledger-row';
import { KyselyUsageRepository } from '../src/usage/usage.repository';
import { freshDataDir, removeDataDir } from '../test/support/pglite';

const SECONDS = Number(process.env.BENCH_SECONDS) || 10;
const FLUSH_MS = 200;
const ROWS_PER_FLUSH = 100;
const LOOKUPS_PER_S = 100;
const SOLO = 2000;

interface Opened {
  db: Kysely<Database>;
  close(): Promise<void>;
}

/** The old code path: PGlite and its dialect on this thread. */
async function openMainThread(dir: string): Promise<Opened> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGliteDialect } = await import('kysely-pglite-dialect');
  const pglite = new PGlite(join(dir, 'pglite'));
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, close: () => db.destroy() };
}

/** As the gateway opens it (database.ts): PGlite in a worker thread. */
async function openWorker(dir: string): Promise<Opened> {
  const database = await openDatabase({ dataDir: dir, poolSize: 1 });
  return { db: database.db, close: () => database.close() };
}

function ledgerRow(keyId: string): LedgerRow {
  return {
    rowId: randomUUID(),
    createdAt: new Date(),
    requestId: `req_${randomUUID()}`,
    keyId,
    team: null,
    endpoint: '/v1/chat/completions',
    method: 'POST',
    modelRequested: 'gpt-bench',
    model: 'gpt-bench',
    provider: 'openai',
    status: 200,
    outcome: 'completed',
    stream: true,
    inputTokens: 120,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 40,
    reasoningTokens: 0,
    costPico: 1_234_000n,
    costEstimated: false,
    protectionCostPico: 0n,
    latencyMs: 12,
    ttftMs: 5,
    protections: null,
    errorCode: null,
    cached: false,
  };
}

const ms = (ns: number): string => (ns / 1e6).toFixed(2);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function timeEach(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t));
  }
  return out.sort((a, b) => a - b);
}

async function run(label: string, open: (dir: string) => Promise<Opened>): Promise<void> {
  const dir = freshDataDir();
  const { db, close } = await open(dir);
  try {
    await migrateToLatest(db as unknown as Kysely<unknown>);
    const keys = new KyselyKeyRepository(db);
    const usage = new KyselyUsageRepository(db);
    const key = await keys.create(
      'key_bench',
      { name: 'bench' },
      { hash: 'h'.repeat(64), prefix: 'gw-bench', last4: 'abcd' },
    );
    // Warm the statements and the cluster's caches.
    for (let i = 0; i < 20; i++) {
      await usage.insert(Array.from({ length: ROWS_PER_FLUSH }, () => ledgerRow(key.id)));
      await keys.findBySecretHash('h'.repeat(64));
    }

    // 1. Steady load, event-loop delay measured meanwhile.
    const delay = monitorEventLoopDelay({ resolution: 1 });
    let flushes = 0;
    let lookups = 0;
    let totals = 0;
    let stop = false;
    const loops = [
      (async () => {
        while (!stop) {
          await usage.insert(Array.from({ length: ROWS_PER_FLUSH }, () => ledgerRow(key.id)));
          flushes++;
          await sleep(FLUSH_MS);
        }
      })(),
      (async () => {
        while (!stop) {
          await keys.findBySecretHash('h'.repeat(64));
          lookups++;
          await sleep(1000 / LOOKUPS_PER_S);
        }
      })(),
      (async () => {
        while (!stop) {
          const now = new Date();
          await usage.totals({ from: new Date(now.getTime() - 86_400_000), to: now }, 'model');
          totals++;
          await sleep(1000);
        }
      })(),
    ];
    delay.enable();
    await sleep(SECONDS * 1000);
    delay.disable();
    stop = true;
    await Promise.all(loops);

    // 2. One statement at a time, nothing else running.
    const lookup = await timeEach(SOLO, () => keys.findBySecretHash('h'.repeat(64)));
    const select1 = await timeEach(SOLO, () => sql`SELECT 1`.execute(db));

    console.log(`\n${label}`);
    console.log(
      `  event-loop delay under load: p50 ${ms(delay.percentile(50))} ms  p99 ${ms(delay.percentile(99))} ms  max ${ms(delay.max)} ms  (${flushes} flushes of ${ROWS_PER_FLUSH} rows, ${lookups} key lookups, ${totals} totals in ${SECONDS} s)`,
    );
    console.log(
      `  key lookup alone: p50 ${ms(quantile(lookup, 0.5))} ms  p99 ${ms(quantile(lookup, 0.99))} ms;  SELECT 1 alone: p50 ${ms(quantile(select1, 0.5))} ms  p99 ${ms(quantile(select1, 0.99))} ms`,
    );
  } finally {
    await close();
    removeDataDir(dir);
  }
}

/** The same monitor with no database at all: the floor the two modes are read against. */
async function baseline(): Promise<void> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await sleep(SECONDS * 1000);
  delay.disable();
  console.log(
    `\nNo database (the monitor's own floor)\n  event-loop delay: p50 ${ms(delay.percentile(50))} ms  p99 ${ms(delay.percentile(99))} ms  max ${ms(delay.max)} ms`,
  );
}

async function main(): Promise<void> {
  console.log(
    `PGlite event-loop bench: ${SECONDS} s of load per mode; ledger ${ROWS_PER_FLUSH} rows every ${FLUSH_MS} ms, ${LOOKUPS_PER_S} key lookups/s, 1 usage total/s`,
  );
  await baseline();
  await run('PGlite on the main thread (before: kysely-pglite-dialect)', openMainThread);
  await run('PGlite in a worker thread (after: database.ts)', openWorker);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
