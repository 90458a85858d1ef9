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
 *      and the Nest floor proxy (nest-proxy.ts), both doing the same checks, and a bare
 *      Nest app answering by itself, interleaved with direct and the gateway (and, with
 *      the 0 ms upstream, the gateway on its other database and with KEY_STORE=off); the
 *      chat stream of phase 2 goes through the Nest floor proxy too;
 *   4. chat throughput and latency under load (autocannon, 64 connections): direct, the
 *      bare proxy, the Nest floor proxy, the bare Nest app, the gateway and its variants.
 * Then, once, the capacity phase (streams.ts): cold start, idle RSS (and the bare Nest
 * app's), 5,000 concurrent slow streams and memory per 1,000 streams. The gateway runs as
 * deployed (deployment.ts): keys issued into PostgreSQL (BENCH_DB), the usage ledger,
 * metrics and the resilience layer on. The
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
  type GatewayChild,
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
  benchDatabases,
  dbLabel,
  deployedEnv,
  issueKey,
  keyStoreOffEnv,
  requestsCounted,
} from './deployment';
import { type FloorTargets, measureFloorLatency, startBare } from './floor';
import {
  CHAT_REQUEST,
  type LoadResult,
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
import { API_KEY, BURST, LOAD, SCALE, VARIANTS, type Variant, log } from './settings';
import { measureCapacity } from './streams';

// ---------------------------------------------------------------------------------------
// One variant, end to end
// ---------------------------------------------------------------------------------------

type Targets = FloorTargets;

async function measurePhases(
  v: Variant,
  t: Targets,
  pids: {
    upstream?: number;
    gateway?: number;
    bare?: number;
    nestProxy?: number;
    nest?: number;
    others: (number | undefined)[];
  },
): Promise<Omit<VariantResult, 'gatewayLog' | 'metricsCounted'>> {
  const anomalies: Anomalies = new Map();
  log(`[${v.name}] warm-up bursts ...`);
  await burst(t.direct);
  await burst(t.gateway);
  for (const x of [t.bare, t.nestProxy, t.nest]) {
    await cannon(x, CHAT_REQUEST, BURST.connections, BURST.durationS);
  }
  // The variants are measured on chat only, but must be as warm there as the main gateway,
  // whose bursts and phases of every case run much of the chat path first: with 1 s of
  // warm-up a gateway spent 3x the CPU per request it spent after 7 s.
  for (const x of t.others) {
    await cannon(x, CHAT_REQUEST, BURST.connections, BURST.durationS * 3);
  }
  const latencies = await measureLatencies(v, t.direct, t.gateway, anomalies);
  log(
    `[${v.name}] non-streamed chat, direct / bare proxy / Nest floor proxy / bare Nest / gateway` +
      `${t.others.map((x) => ` / ${x.label}`).join('')}, concurrency 1 ...`,
  );
  const floor = await measureFloorLatency(v, t, anomalies);
  const streams = await measureStreams(v, t.direct, t.gateway, anomalies, t.nestProxy);
  log(`[${v.name}] throughput, ${LOAD.connections} connections ...`);
  const up = pids.upstream;
  const others: Record<string, LoadResult> = {};
  const load = {
    direct: await measureLoad(t.direct, { upstream: up }, anomalies),
    bare: await measureLoad(t.bare, { upstream: up, gateway: pids.bare }, anomalies),
    nestProxy: await measureLoad(t.nestProxy, { upstream: up, gateway: pids.nestProxy }, anomalies),
    nest: await measureLoad(t.nest, { gateway: pids.nest }, anomalies),
    gateway: await measureLoad(t.gateway, pids, anomalies),
    others,
  };
  for (const [i, x] of t.others.entries()) {
    others[x.label ?? `#${i}`] = await measureLoad(
      x,
      { upstream: up, gateway: pids.others[i] },
      anomalies,
    );
  }
  return { variant: v, latencies, floor, streams, load, anomalies: Object.fromEntries(anomalies) };
}

/** A gateway variant beside the main one: its label and what its child gets. */
interface GatewayVariant {
  label: string;
  env: Record<string, string>;
  /** Issue a key through its admin API (the key store on), else use the static bench key. */
  issuesKey: boolean;
}

/**
 * The gateway variants of a run: the main gateway's other databases, and KEY_STORE=off.
 * Measured with the 0 ms upstream only, where the gateway's own cost is not hidden.
 */
function gatewayVariants(dbs: BenchDatabase[]): GatewayVariant[] {
  return [
    ...dbs.slice(1).map((db) => ({ label: dbLabel(db), env: deployedEnv(db), issuesKey: true })),
    { label: 'KEY_STORE=off', env: keyStoreOffEnv(), issuesKey: false },
  ];
}

async function runVariant(v: Variant, dir: string, dbs: BenchDatabase[]): Promise<VariantResult> {
  log(`[${v.name}] starting the fake upstream, the floor processes and the gateways ...`);
  const upstream = await startUpstream(v);
  const stopUpstream = onCleanup(() => stopChild(upstream.child));
  const catalog = writeCatalog(dir, upstream.port);
  const gw = await startGateway(dir, catalog, { env: deployedEnv(dbs[0]) });
  const stopGateway = onCleanup(() => stopChild(gw.child));
  const key = await issueKey(gw.port);
  useKey(key);
  const variants = v.latencyMs === 0 ? gatewayVariants(dbs) : [];
  const otherChildren: GatewayChild[] = [];
  const stopOthers: (() => Promise<void>)[] = [];
  const others: Target[] = [];
  for (const variant of variants) {
    const child = await startGateway(dir, catalog, { env: variant.env });
    otherChildren.push(child);
    stopOthers.push(onCleanup(() => stopChild(child.child)));
    const secret = variant.issuesKey ? await issueKey(child.port) : API_KEY;
    others.push(
      target('gateway', child.port, { label: variant.label, authorization: `Bearer ${secret}` }),
    );
  }
  const bare = await startBare(upstream.port, key);
  const stopBare = onCleanup(() => stopChild(bare.child));
  const nestProxy = await startBare(upstream.port, key, 'nest-proxy.ts');
  const stopNestProxy = onCleanup(() => stopChild(nestProxy.child));
  const nest = await startBare(upstream.port, key, 'bare-nest.ts');
  const stopNest = onCleanup(() => stopChild(nest.child));
  const t: Targets = {
    direct: target('direct', upstream.port),
    bare: target('bare', bare.port),
    nestProxy: target('nestProxy', nestProxy.port),
    nest: target('nest', nest.port),
    gateway: target('gateway', gw.port, { label: dbLabel(dbs[0]) }),
    others,
  };
  let measured: Omit<VariantResult, 'gatewayLog' | 'metricsCounted'>;
  let metricsCounted: number;
  try {
    measured = await measurePhases(v, t, {
      upstream: upstream.child.pid,
      gateway: gw.child.pid,
      bare: bare.child.pid,
      nestProxy: nestProxy.child.pid,
      nest: nest.child.pid,
      others: otherChildren.map((c) => c.child.pid),
    });
    metricsCounted = await requestsCounted(gw.port);
  } catch (e) {
    throw await explainFailure(e, gw);
  } finally {
    for (const x of [t.direct, t.bare, t.nestProxy, t.nest, t.gateway, ...t.others]) {
      await x.pool.close();
    }
    await stopGateway();
    for (const stop of stopOthers) {
      await stop();
    }
    await stopNest();
    await stopNestProxy();
    await stopBare();
    await stopUpstream();
  }
  // Read only now: the log is complete once the gateway has exited.
  const gatewayLog = summarizeLog(gw.logPath);
  rmSync(gw.logPath);
  for (const c of otherChildren) {
    const other = summarizeLog(c.logPath);
    gatewayLog.nonOkAccessLines += other.nonOkAccessLines;
    for (const [what, count] of Object.entries(other.nonOkRequests)) {
      gatewayLog.nonOkRequests[what] = (gatewayLog.nonOkRequests[what] ?? 0) + count;
    }
    rmSync(c.logPath);
  }
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
  const dbs = await benchDatabases();
  for (const db of dbs) {
    onCleanup(() => db.drop());
  }
  const database = dbs.map(dbLabel).join(' (every phase); ');
  log(`keys and ledger in ${database}${dbs.length > 1 ? ' (concurrency 1 and load)' : ''}`);
  const results: VariantResult[] = [];
  for (const variant of VARIANTS) {
    results.push(await runVariant(variant, dir, dbs));
  }
  const capacity = await measureCapacity(dir, dbs[0]);
  rmSync(dir, { recursive: true, force: true });
  const previous = previousResults(SCALE);
  printReport(env, micro, results, capacity, dbLabel(dbs[0]), previous);
  log(`\nresults written to ${writeResults(env, micro, results, capacity, database)}`);
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
