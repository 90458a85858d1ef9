/**
 * `npm run bench:scale`: does a second replica add throughput (issue 29: 2 replicas sharing
 * PostgreSQL and Redis should reach >= 1.8x one replica when each has its own core)?
 *
 * Starts the fake upstream (0 ms), then two gateways as deployed (deployment.ts) sharing one
 * scratch PostgreSQL database (keys, ledger) and one Redis (rate-limit counters, under a
 * prefix of this run), each pinned to its own CPU with `taskset` when there is one
 * (BENCH_PIN=0: unpinned). One key is issued through replica A and used on both. Then, in
 * alternating rounds, non-streamed chat at 64 connections: all to replica A, then 32 to each
 * replica at once. There is no balancer process: the load generator splits its connections
 * across the two ports, as a balancer holding keep-alive connections would, so that no third
 * server competes for the cores.
 *
 * What bounds the ratio is printed beside it: the CPU each process used over the measured
 * seconds (replicas, fake upstream, this load generator) and the machine's busy share
 * (everything else, PostgreSQL, Redis and other tenants, is the rest). With 2 cores, the
 * load generator and the upstream share them with the replicas: 2 replicas cannot each have
 * a core of their own here, so the ratio shows where this machine stops, not the target.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type autocannon from 'autocannon';
import { useKey } from './bodies';
import {
  type GatewayChild,
  cpuTimeMs,
  ensureBuilt,
  startGateway,
  startUpstream,
  stopChild,
  writeCatalog,
} from './children';
import { type Target, target } from './client';
import { benchDatabase, deployedEnv, issueKey } from './deployment';
import { CHAT_REQUEST, cannon } from './phases';
import { LOAD, SCALE, VARIANTS, log } from './settings';
import { round } from './stats';

const ROUNDS = 2;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resolves when something accepts TCP connections at the Redis URL's address. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
    const n = fields.map(Number);
    const total = n.reduce((a, b) => a + b, 0);
    return { busy: total - n[3] - (n[4] ?? 0), total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

interface Sample {
  rps: number;
  errors: number;
  /** CPU used per wall second, in cores, by each process over the measured run. */
  cores: { a: number; b: number; upstream: number; loadGenerator: number; machine: number };
}

/** Runs `load` while reading every process's CPU time before and after. */
async function measured(
  pids: { a?: number; b?: number; upstream?: number },
  load: () => Promise<autocannon.Result[]>,
): Promise<Sample> {
  const before = {
    a: cpuTimeMs(pids.a),
    b: cpuTimeMs(pids.b),
    upstream: cpuTimeMs(pids.upstream),
    self: process.cpuUsage(),
    machine: machineTicks(),
    at: process.hrtime.bigint(),
  };
  const results = await load();
  const wallMs = Number(process.hrtime.bigint() - before.at) / 1e6;
  const self = process.cpuUsage(before.self);
  const machine = machineTicks();
  const share = (pid: number | undefined, then: number | undefined): number =>
    round(((cpuTimeMs(pid) ?? NaN) - (then ?? NaN)) / wallMs, 2);
  return {
    rps: round(
      results.reduce((sum, r) => sum + r.requests.average, 0),
      0,
    ),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0),
    cores: {
      a: share(pids.a, before.a),
      b: share(pids.b, before.b),
      upstream: share(pids.upstream, before.upstream),
      loadGenerator: round((self.user + self.system) / 1000 / wallMs, 2),
      machine: round(
        ((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) *
          cpus().length,
        2,
      ),
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : round((s[mid - 1] + s[mid]) / 2, 0);
}

function table(one: Sample[], two: Sample[], pinned: boolean): string {
  const cell = (s: Sample): string =>
    `${String(s.rps).padStart(8)}  ${[s.cores.a, s.cores.b, s.cores.upstream, s.cores.loadGenerator, s.cores.machine].map((c) => c.toFixed(2).padStart(9)).join('')}${s.errors ? `  (${s.errors} failed)` : ''}`;
  const lines = [
    '',
    `Scale out: non-streamed chat, ${LOAD.connections} connections, ${Math.max(1, Math.round(LOAD.durationS * SCALE))} s per round, ${ROUNDS} rounds`,
    `replicas ${pinned ? 'pinned: A to CPU 0, B to CPU 1' : 'not pinned'}; fake upstream and load generator unpinned; ${cpus().length} CPUs`,
    `    ${''.padEnd(22)}${'req/s'.padStart(8)}  ${['A', 'B', 'upstream', 'load gen', 'machine'].map((h) => h.padStart(9)).join('')}   (CPU used, in cores)`,
  ];
  for (let i = 0; i < one.length; i++) {
    lines.push(`    ${`round ${i + 1}, 1 replica`.padEnd(22)}${cell(one[i])}`);
    lines.push(`    ${`round ${i + 1}, 2 replicas`.padEnd(22)}${cell(two[i])}`);
  }
  const r1 = median(one.map((s) => s.rps));
  const r2 = median(two.map((s) => s.rps));
  const busy = median(two.map((s) => s.cores.machine));
  const last = two[two.length - 1].cores;
  const ours = round(last.a + last.b + last.upstream + last.loadGenerator, 2);
  lines.push(
    `    2 replicas / 1 replica: ${round(r2 / r1, 3)}x (median req/s ${r2} / ${r1}; target >= 1.8 with a core per replica)`,
    `    bounded by: the machine was ${busy} of ${cpus().length} cores busy with 2 replicas; of that the replicas, ` +
      `the fake upstream and the load generator used ${ours}, the other ${round(last.machine - ours, 2)} PostgreSQL, Redis and other tenants.`,
    busy >= cpus().length * 0.9
      ? `    The cores were saturated: the load generator and the upstream took ${round(last.upstream + last.loadGenerator, 2)} cores that a replica of its own would need.`
      : `    The cores were not saturated: the replicas waited on something shared (PostgreSQL, Redis, the load generator's event loop).`,
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  ensureBuilt();
  if (!(await reachable(REDIS_URL))) {
    throw new Error(`Redis does not answer at ${REDIS_URL} (REDIS_URL)`);
  }
  const db = await benchDatabase();
  if (db.kind !== 'postgresql') {
    throw new Error('replicas share PostgreSQL: none answers (DATABASE_URL or 127.0.0.1:5432)');
  }
  const pinned =
    process.env.BENCH_PIN !== '0' &&
    cpus().length >= 2 &&
    spawnSync('taskset', ['-V']).status === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gateway-scale-'));
  const upstream = await startUpstream(VARIANTS[0]);
  const replicas: GatewayChild[] = [];
  const targets: Target[] = [];
  try {
    const catalog = writeCatalog(dir, upstream.port);
    const env = {
      ...deployedEnv(db),
      REDIS_URL,
      // This run's counters only; they expire with their windows.
      REDIS_KEY_PREFIX: `gw:bench:${process.pid}:`,
    };
    for (const cpu of ['0', '1']) {
      log(`starting replica ${cpu === '0' ? 'A' : 'B'}${pinned ? ` on CPU ${cpu}` : ''} ...`);
      replicas.push(await startGateway(dir, catalog, { env, cpus: pinned ? cpu : undefined }));
    }
    useKey(await issueKey(replicas[0].port));
    targets.push(...replicas.map((r) => target('gateway', r.port)));
    const [a, b] = targets;
    log('warm-up: 10 connections, 2 s per replica ...');
    for (const t of targets) {
      const w = await cannon(t, CHAT_REQUEST, 10, 2 / SCALE);
      if (w.errors + w.timeouts + w.non2xx > 0) {
        throw new Error(
          `${t.origin}: ${w.non2xx} non-2xx, ${w.errors} errors during the warm-up (the key shared?)`,
        );
      }
    }
    const pids = {
      a: replicas[0].child.pid,
      b: replicas[1].child.pid,
      upstream: upstream.child.pid,
    };
    const half = LOAD.connections / 2;
    const one: Sample[] = [];
    const two: Sample[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      log(`round ${i + 1}: 1 replica, then 2 ...`);
      one.push(
        await measured(pids, async () => [
          await cannon(a, CHAT_REQUEST, LOAD.connections, LOAD.durationS),
        ]),
      );
      two.push(
        await measured(pids, () =>
          Promise.all([
            cannon(a, CHAT_REQUEST, half, LOAD.durationS),
            cannon(b, CHAT_REQUEST, half, LOAD.durationS),
          ]),
        ),
      );
    }
    process.stdout.write(`${table(one, two, pinned)}\n`);
  } finally {
    for (const t of targets) {
      await t.pool.close();
    }
    for (const r of replicas) {
      await stopChild(r.child);
    }
    await stopChild(upstream.child);
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  log(`scale-out bench FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
