/**
 * `npm run bench:quick`: a one-minute before/after check for one change to the hot path.
 * Starts the fake upstream (0 ms), the bare proxy (bench/bare-proxy.ts), the Nest floor proxy
 * (bench/nest-proxy.ts), the bare Nest app (bench/bare-nest.ts, answering by itself: Nest's
 * own share of the latency) and the gateway as deployed (deployment.ts: a database key, the
 * ledger, metrics, resilience), then measures non-streamed chat at concurrency 1 (the five
 * interleaved)
 * and requests per second at 64 connections. The full report is `npm run bench`.
 * QUICK_NODE_ARGS adds node flags to the gateway. QUICK_PROFILE=1 writes a CPU profile of the gateway (`--cpu-prof`) under load to
 * bench/results/profiles/. QUICK_ENV='A=1 B=2' adds gateway environment variables.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATENCY_CASES } from './cases';
import {
  cpuTimeMs,
  ensureBuilt,
  startGateway,
  startUpstream,
  stopChild,
  writeCatalog,
} from './children';
import { useKey } from './bodies';
import { benchDatabase, deployedEnv, issueKey } from './deployment';
import { startBare } from './floor';
import { type Anomalies, type Target, target, timeCompletion } from './client';
import { CHAT_REQUEST, cannon } from './phases';
import { round, summarize } from './stats';
import { ROOT, VARIANTS, log } from './settings';

const PAIRS = Number(process.env.QUICK_PAIRS ?? 1500);
const LOAD_S = Number(process.env.QUICK_LOAD_S ?? 5);

function extraEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (process.env.QUICK_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

async function latencies(targets: Target[], anomalies: Anomalies): Promise<number[][]> {
  const chat = LATENCY_CASES[0];
  const out: number[][] = targets.map(() => []);
  for (let i = 0; i < PAIRS + 300; i++) {
    for (const [j, t] of targets.entries()) {
      const ms = await timeCompletion(t, chat, anomalies, false);
      if (i >= 300) {
        out[j].push(ms);
      }
    }
  }
  return out;
}

async function main(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-quick-'));
  const upstream = await startUpstream(VARIANTS[0]);
  const db = await benchDatabase();
  const profileDir = join(ROOT, 'bench', 'results', 'profiles');
  const nodeArgs = [
    ...(process.env.QUICK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    ...(process.env.QUICK_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  ];
  if (process.env.QUICK_PROFILE) {
    mkdirSync(profileDir, { recursive: true });
  }
  const gw = await startGateway(dir, writeCatalog(dir, upstream.port), {
    nodeArgs,
    env: { ...deployedEnv(db), ...extraEnv() },
  });
  const key = await issueKey(gw.port);
  useKey(key);
  const bare = await startBare(upstream.port, key);
  const nestProxy = await startBare(upstream.port, key, 'nest-proxy.ts');
  const nest = await startBare(upstream.port, key, 'bare-nest.ts');
  const targets = [
    target('direct', upstream.port),
    target('bare', bare.port),
    target('nestProxy', nestProxy.port),
    target('nest', nest.port),
    target('gateway', gw.port),
  ];
  const names = ['direct', 'bare', 'nestProxy', 'nest', 'gateway'];
  try {
    const anomalies: Anomalies = new Map();
    for (const t of targets) {
      await cannon(t, CHAT_REQUEST, 10, 2);
    }
    const lat = (await latencies(targets, anomalies)).map((s) => summarize(s));
    const rps: number[] = [];
    let cpuUs = NaN;
    for (const t of targets) {
      const before = cpuTimeMs(gw.child.pid);
      const r = await cannon(t, CHAT_REQUEST, 64, LOAD_S);
      if (t.name === 'gateway') {
        cpuUs = (((cpuTimeMs(gw.child.pid) ?? NaN) - (before ?? NaN)) * 1000) / r.requests.total;
      }
      if (r.non2xx + r.errors > 0) {
        throw new Error(`${t.origin}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      }
      rps.push(r.requests.average);
    }
    for (const [i, name] of names.entries()) {
      const added =
        i === 0
          ? ''
          : ` added p50 ${round(lat[i].p50 - lat[0].p50, 3)} p99 ${round(lat[i].p99 - lat[0].p99, 3)}`;
      log(
        `${name.padEnd(10)} p50 ${lat[i].p50} p99 ${lat[i].p99}${added}  rps@64 ${round(rps[i], 0)}`,
      );
    }
    log(
      `gateway/bare throughput ${round(rps[4] / rps[1], 3)}, gateway/nestProxy ${round(rps[4] / rps[2], 3)}, ` +
        `nest/bare ${round(rps[3] / rps[1], 3)}; ` +
        `gateway CPU ${round(cpuUs, 0)} µs per request`,
    );
  } finally {
    for (const t of targets) {
      await t.pool.close();
    }
    await stopChild(gw.child);
    await stopChild(bare.child);
    await stopChild(nest.child);
    await stopChild(nestProxy.child);
    await stopChild(upstream.child);
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  log(`quick bench FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
