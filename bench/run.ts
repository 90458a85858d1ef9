/**
 * Gateway overhead benchmark (`npm run bench`). See bench/README.md for what is measured
 * and how to read the numbers.
 *
 * For each upstream variant (0 ms and 20 ms to first byte) it starts a fake upstream
 * (OpenAI Chat Completions, OpenAI Responses and Anthropic Messages) and the built gateway
 * (`node dist/main.js`) as child processes, then compares the same requests sent straight
 * to the upstream ("direct") with requests sent through the gateway, in the same run:
 *   1. non-streamed latency at concurrency 1, direct and gateway interleaved, for each
 *      entry of LATENCY_CASES (chat fast path, chat translated to Anthropic Messages);
 *   2. time to first content event and whole-stream time of streams, interleaved the same
 *      way, for each entry of STREAM_CASES (chat, responses, messages fast paths, then
 *      chat -> messages, messages -> chat and chat -> responses translated paths);
 *   3. the floor (floor.ts): non-streamed chat through a bare node:http + undici proxy
 *      doing the same checks, interleaved with direct and the gateway;
 *   4. chat throughput and latency under load (autocannon, 64 connections): direct, the
 *      bare proxy, a bare Nest app answering by itself, and the gateway.
 * Then, once, the capacity phase (streams.ts): cold start, idle RSS, 5,000 concurrent slow
 * streams and memory per 1,000 streams. The gateway runs as deployed (deployment.ts): keys
 * issued into PostgreSQL, the usage ledger, metrics and the resilience layer on. The
 * headline table (targets.ts) sets each number against its target and the
 * previous run's value.
 * A translated case's direct call is the upstream's own API, in its own format. The cases
 * `chat+filter`, `chat+injection` and `chat+shadow` turn on one protection each (a
 * function tool in the request); each round sends the request without the tool to the
 * upstream, then to the gateway, then the request with it to the gateway: the last two
 * differ only by the protection, which is what it adds.
 * Before any child process starts, micro.ts times the protections' own code in process
 * (the injection detector per KB, the leak filter per streamed answer).
 * All traffic stays on 127.0.0.1. Every loop is bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMicro } from './micro';
import {
  ensureBuilt,
  explainFailure,
  startGateway,
  startUpstream,
  stopChild,
  summarizeLog,
  writeCatalog,
} from './children';
import { useKey } from './bodies';
import { type Anomalies, type Target, target } from './client';
import {
  type BenchDatabase,
  benchDatabase,
  deployedEnv,
  issueKey,
  requestsCounted,
} from './deployment';
import { measureFloorLatency, startBare } from './floor';
import {
  CHAT_REQUEST,
  burst,
  cannon,
  measureLatencies,
  measureLoad,
  measureStreams,
} from './phases';
import {
  type VariantResult,
  environment,
  previousResults,
  printReport,
  writeResults,
} from './report';
import { BURST, LOAD, SCALE, VARIANTS, type Variant, log } from './settings';
import { measureCapacity } from './streams';

// ---------------------------------------------------------------------------------------
// One variant, end to end
// ---------------------------------------------------------------------------------------

interface Targets {
  direct: Target;
  bare: Target;
  nest: Target;
  gateway: Target;
}

async function measurePhases(
  v: Variant,
  t: Targets,
  pids: { upstream?: number; gateway?: number; bare?: number; nest?: number },
): Promise<Omit<VariantResult, 'gatewayLog' | 'metricsCounted'>> {
  const anomalies: Anomalies = new Map();
  log(`[${v.name}] warm-up bursts ...`);
  await burst(t.direct);
  await burst(t.gateway);
  await cannon(t.bare, CHAT_REQUEST, BURST.connections, BURST.durationS);
  await cannon(t.nest, CHAT_REQUEST, BURST.connections, BURST.durationS);
  const latencies = await measureLatencies(v, t.direct, t.gateway, anomalies);
  log(
    `[${v.name}] non-streamed chat, direct / bare proxy / bare Nest / gateway, concurrency 1 ...`,
  );
  const floor = await measureFloorLatency(v, t, anomalies);
  const streams = await measureStreams(v, t.direct, t.gateway, anomalies);
  log(`[${v.name}] throughput, ${LOAD.connections} connections ...`);
  const load = {
    direct: await measureLoad(t.direct, { upstream: pids.upstream }, anomalies),
    bare: await measureLoad(t.bare, { upstream: pids.upstream, gateway: pids.bare }, anomalies),
    nest: await measureLoad(t.nest, { gateway: pids.nest }, anomalies),
    gateway: await measureLoad(t.gateway, pids, anomalies),
  };
  return { variant: v, latencies, floor, streams, load, anomalies: Object.fromEntries(anomalies) };
}

async function runVariant(v: Variant, dir: string, db: BenchDatabase): Promise<VariantResult> {
  log(`[${v.name}] starting the fake upstream, the floor processes and the gateway ...`);
  const upstream = await startUpstream(v);
  const stopUpstream = onCleanup(() => stopChild(upstream.child));
  const gw = await startGateway(dir, writeCatalog(dir, upstream.port), { env: deployedEnv(db) });
  const stopGateway = onCleanup(() => stopChild(gw.child));
  const key = await issueKey(gw.port);
  useKey(key);
  const bare = await startBare(upstream.port, key);
  const stopBare = onCleanup(() => stopChild(bare.child));
  const nest = await startBare(upstream.port, key, 'bare-nest.ts');
  const stopNest = onCleanup(() => stopChild(nest.child));
  const t: Targets = {
    direct: target('direct', upstream.port),
    bare: target('bare', bare.port),
    nest: target('nest', nest.port),
    gateway: target('gateway', gw.port),
  };
  let measured: Omit<VariantResult, 'gatewayLog' | 'metricsCounted'>;
  let metricsCounted: number;
  try {
    measured = await measurePhases(v, t, {
      upstream: upstream.child.pid,
      gateway: gw.child.pid,
      bare: bare.child.pid,
      nest: nest.child.pid,
    });
    metricsCounted = await requestsCounted(gw.port);
  } catch (e) {
    throw await explainFailure(e, gw);
  } finally {
    for (const x of Object.values(t)) {
      await x.pool.close();
    }
    await stopGateway();
    await stopNest();
    await stopBare();
    await stopUpstream();
  }
  // Read only now: the log is complete once the gateway has exited.
  const gatewayLog = summarizeLog(gw.logPath);
  rmSync(gw.logPath);
  return { ...measured, gatewayLog, metricsCounted };
}

// Main, with cleanup on every exit path
// ---------------------------------------------------------------------------------------

const cleanups: (() => Promise<void>)[] = [];

/** Registers a cleanup step; the returned function runs it early. Each step runs at most once. */
function onCleanup(step: () => Promise<void>): () => Promise<void> {
  let done = false;
  const once = async (): Promise<void> => {
    if (!done) {
      done = true;
      await step();
    }
  };
  cleanups.push(once);
  return once;
}

async function cleanUp(): Promise<void> {
  for (const step of cleanups.reverse()) {
    await step().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  log(`temporary catalog and gateway logs in ${dir} (kept if the run fails)`);
  const env = environment();
  // In process, before any child process competes for the CPU.
  const micro = runMicro(SCALE, log);
  const db = await benchDatabase();
  onCleanup(() => db.drop());
  log(
    `keys and ledger in ${db.kind === 'postgresql' ? 'PostgreSQL (scratch database)' : 'PGlite (no PostgreSQL reachable)'}`,
  );
  const results: VariantResult[] = [];
  for (const variant of VARIANTS) {
    results.push(await runVariant(variant, dir, db));
  }
  const capacity = await measureCapacity(dir, db);
  rmSync(dir, { recursive: true, force: true });
  const previous = previousResults(SCALE);
  printReport(env, micro, results, capacity, db.kind, previous);
  log(`\nresults written to ${writeResults(env, micro, results, capacity, db.kind)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the child processes ...`);
    void cleanUp().then(() => process.exit(130));
  });
}

main()
  .then(async () => {
    await cleanUp();
    process.exit(0);
  })
  .catch(async (e: unknown) => {
    log(`\nbenchmark FAILED: ${e instanceof Error ? e.message : String(e)}`);
    await cleanUp();
    process.exit(1);
  });
