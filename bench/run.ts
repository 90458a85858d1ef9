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
 *   3. chat throughput and latency under load (autocannon, fixed concurrency).
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
import { type Anomalies, type Target, target } from './client';
import { burst, measureLatencies, measureLoad, measureStreams } from './phases';
import { type VariantResult, environment, printReport, writeResults } from './report';
import { LOAD, SCALE, VARIANTS, type Variant, log } from './settings';

// ---------------------------------------------------------------------------------------
// One variant, end to end
// ---------------------------------------------------------------------------------------

async function measurePhases(
  v: Variant,
  direct: Target,
  gateway: Target,
  pids: { upstream?: number; gateway?: number },
): Promise<Omit<VariantResult, 'gatewayLog'>> {
  const anomalies: Anomalies = new Map();
  log(`[${v.name}] warm-up bursts ...`);
  await burst(direct);
  await burst(gateway);
  const latencies = await measureLatencies(v, direct, gateway, anomalies);
  const streams = await measureStreams(v, direct, gateway, anomalies);
  log(`[${v.name}] throughput, ${LOAD.connections} connections ...`);
  const load = {
    direct: await measureLoad(direct, { upstream: pids.upstream }, anomalies),
    gateway: await measureLoad(gateway, pids, anomalies),
  };
  return { variant: v, latencies, streams, load, anomalies: Object.fromEntries(anomalies) };
}

async function runVariant(v: Variant, dir: string): Promise<VariantResult> {
  log(`[${v.name}] starting the fake upstream and the gateway ...`);
  const upstream = await startUpstream(v);
  const stopUpstream = onCleanup(() => stopChild(upstream.child));
  const gw = await startGateway(dir, writeCatalog(dir, upstream.port));
  const stopGateway = onCleanup(() => stopChild(gw.child));
  const direct = target('direct', upstream.port);
  const gateway = target('gateway', gw.port);
  let measured: Omit<VariantResult, 'gatewayLog'>;
  try {
    measured = await measurePhases(v, direct, gateway, {
      upstream: upstream.child.pid,
      gateway: gw.child.pid,
    });
  } catch (e) {
    throw await explainFailure(e, gw);
  } finally {
    await direct.pool.close();
    await gateway.pool.close();
    await stopGateway();
    await stopUpstream();
  }
  // Read only now: the log is complete once the gateway has exited.
  const gatewayLog = summarizeLog(gw.logPath);
  rmSync(gw.logPath);
  return { ...measured, gatewayLog };
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
  const results: VariantResult[] = [];
  for (const variant of VARIANTS) {
    results.push(await runVariant(variant, dir));
  }
  rmSync(dir, { recursive: true, force: true });
  printReport(env, micro, results);
  log(`\nresults written to ${writeResults(env, micro, results)}`);
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
