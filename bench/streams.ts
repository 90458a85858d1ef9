/**
 * The capacity phase of `npm run bench`, on a gateway of its own:
 *   - cold start: from spawning `node dist/main.js` to the first 200 of /health/ready;
 *   - idle RSS: the gateway's resident memory once ready and idle for IDLE_SETTLE_MS, after
 *     SETTLED_IDLE_MS of rest, and again after WARM_UP_STREAMS first streams (what a
 *     replica in service holds at rest);
 *   - STREAMS.count concurrent slow chat streams (the fake upstream spaces the content
 *     chunks STREAMS.chunkIntervalMs apart), all opened at once: how many complete with
 *     every chunk and [DONE], and the gateway's peak RSS above its in-service idle per
 *     1,000 streams.
 * The bare proxy and the Nest floor proxy get the same streams, so their memory per stream
 * is the floor; the bare Nest app's idle RSS is the floor of the gateway's (issue 29: the
 * gateway may hold at most 40 MB more at rest than a Nest app that does nothing). The floor
 * processes run compiled JavaScript, as the gateway does (floor.ts).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { HEADERS, chatBody } from './bodies';
import {
  type GatewayChild,
  startGateway,
  startUpstream,
  stopChild,
  writeCatalog,
} from './children';
import { type BenchDatabase, deployedEnv, issueKey } from './deployment';
import { type BareChild, startBare } from './floor';
import { useKey } from './bodies';
import { CHAT_PATH, CHUNK_COUNT, MODEL, SCALE, STREAMS, log } from './settings';
import { round } from './stats';

export interface StreamsResult {
  coldStartMs: number;
  idleRssMb: number;
  /**
   * RSS once idle for SETTLED_IDLE_MS: by then V8's memory reducer has collected the boot's
   * garbage and given back the pages (a replica waiting for traffic sits here).
   */
  settledIdleRssMb: number;
  /** RSS at rest after a first WARM_UP_STREAMS streams: the base of the per-stream figure. */
  servingIdleRssMb: number;
  streams: number;
  completed: number;
  failed: number;
  failures: Record<string, number>;
  durationS: number;
  peakRssMb: number;
  mbPer1000Streams: number;
  bare: { idleRssMb: number; peakRssMb: number; mbPer1000Streams: number; completed: number };
  /**
   * The bare Nest app (answers by itself): RSS IDLE_SETTLE_MS after it is ready, and at the
   * moment the gateway's settled figure is read (after at least SETTLED_IDLE_MS minus its
   * own start-up at rest). Missing in files written before issue 29.
   */
  bareNest?: { idleRssMb: number; settledIdleRssMb: number };
  /** The Nest floor proxy: idle as bareNest, then the same streams as the gateway. */
  nestProxy?: {
    idleRssMb: number;
    settledIdleRssMb: number;
    servingIdleRssMb: number;
    peakRssMb: number;
    mbPer1000Streams: number;
    completed: number;
  };
}

const IDLE_SETTLE_MS = 2000;
const SETTLED_IDLE_MS = 30_000;
const WARM_UP_STREAMS = 50;

export function rssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return round(kb / 1024, 1);
  } catch {
    return NaN;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Opens `count` streams at once against `origin`; resolves with the outcome counts. */
async function openStreams(
  origin: string,
  count: number,
  pid: number | undefined,
): Promise<{ completed: number; failures: Record<string, number>; peakRssMb: number; s: number }> {
  const dispatcher = new Agent({
    connections: count,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  const body = chatBody(MODEL, true);
  let peak = rssMb(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  const failures: Record<string, number> = {};
  const fail = (why: string): void => {
    failures[why] = (failures[why] ?? 0) + 1;
  };
  const start = process.hrtime.bigint();
  let completed = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      try {
        const res = await request(origin + CHAT_PATH, {
          method: 'POST',
          headers: HEADERS,
          body,
          dispatcher,
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) {
          fail(`HTTP ${res.statusCode}`);
        } else if (!text.trimEnd().endsWith('data: [DONE]')) {
          fail('no [DONE]');
        } else if (text.split('"content":"token').length - 1 !== CHUNK_COUNT) {
          fail('missing chunks');
        } else {
          completed++;
        }
      } catch (e) {
        fail((e as { code?: string }).code ?? (e as Error).message);
      }
    }),
  );
  clearInterval(sampler);
  await dispatcher.close();
  return { completed, failures, peakRssMb: peak, s: Number(process.hrtime.bigint() - start) / 1e9 };
}

export async function measureCapacity(dir: string, db: BenchDatabase): Promise<StreamsResult> {
  const count = Math.max(100, Math.round(STREAMS.count * SCALE));
  log(`[capacity] cold start, idle memory, then ${count} concurrent slow streams ...`);
  const upstream = await startUpstream({
    name: 'slow streams',
    latencyMs: 0,
    chunkIntervalMs: STREAMS.chunkIntervalMs,
    latencyWarmupPairs: 0,
    latencyPairs: 0,
    shortLatencyPairs: { warmup: 0, measured: 0 },
    streamPairs: { full: { warmup: 0, measured: 0 }, short: { warmup: 0, measured: 0 } },
  });
  let gw: GatewayChild | undefined;
  let bare: BareChild | undefined;
  let nestProxy: BareChild | undefined;
  let bareNest: BareChild | undefined;
  try {
    const spawned = process.hrtime.bigint();
    gw = await startGateway(dir, writeCatalog(dir, upstream.port), {
      env: deployedEnv(db),
      readyPollMs: 5,
    });
    const coldStartMs = round(Number(process.hrtime.bigint() - spawned) / 1e6, 0);
    const key = await issueKey(gw.port);
    useKey(key);
    await sleep(IDLE_SETTLE_MS);
    const idleRssMb = rssMb(gw.child.pid);
    // The Nest floors rest beside the gateway, so that their settled figures are read at the
    // same moment (their start-up, a second or two, comes off their rest).
    const floorsUp = Date.now();
    nestProxy = await startBare(upstream.port, key, 'nest-proxy.ts');
    bareNest = await startBare(upstream.port, key, 'bare-nest.ts');
    await sleep(IDLE_SETTLE_MS);
    const nestIdle = [rssMb(nestProxy.child.pid), rssMb(bareNest.child.pid)];
    await sleep(Math.max(0, SETTLED_IDLE_MS - 2 * IDLE_SETTLE_MS - (Date.now() - floorsUp)));
    const settledIdleRssMb = rssMb(gw.child.pid);
    const nestSettled = [rssMb(nestProxy.child.pid), rssMb(bareNest.child.pid)];
    await stopChild(bareNest.child);
    // A replica in service has loaded what its first requests load once (compiled code,
    // caches): that is not memory per stream.
    await openStreams(`http://127.0.0.1:${gw.port}`, WARM_UP_STREAMS, gw.child.pid);
    await sleep(IDLE_SETTLE_MS);
    const servingIdleRssMb = rssMb(gw.child.pid);
    const g = await openStreams(`http://127.0.0.1:${gw.port}`, count, gw.child.pid);
    const per1000 = (peak: number, idle: number): number =>
      round(((peak - idle) * 1000) / count, 1);
    const floor = async (
      child: BareChild,
    ): Promise<{ idle: number; peak: number; per1000: number; completed: number }> => {
      const origin = `http://127.0.0.1:${child.port}`;
      await openStreams(origin, WARM_UP_STREAMS, child.child.pid);
      await sleep(IDLE_SETTLE_MS);
      const idle = rssMb(child.child.pid);
      const r = await openStreams(origin, count, child.child.pid);
      return {
        idle,
        peak: r.peakRssMb,
        per1000: per1000(r.peakRssMb, idle),
        completed: r.completed,
      };
    };
    const np = await floor(nestProxy);
    await stopChild(nestProxy.child);
    bare = await startBare(upstream.port, key);
    const b = await floor(bare);
    return {
      coldStartMs,
      idleRssMb,
      settledIdleRssMb,
      servingIdleRssMb,
      streams: count,
      completed: g.completed,
      failed: count - g.completed,
      failures: g.failures,
      durationS: round(g.s, 2),
      peakRssMb: g.peakRssMb,
      mbPer1000Streams: per1000(g.peakRssMb, servingIdleRssMb),
      bare: {
        idleRssMb: b.idle,
        peakRssMb: b.peak,
        mbPer1000Streams: b.per1000,
        completed: b.completed,
      },
      bareNest: { idleRssMb: nestIdle[1], settledIdleRssMb: nestSettled[1] },
      nestProxy: {
        idleRssMb: nestIdle[0],
        settledIdleRssMb: nestSettled[0],
        servingIdleRssMb: np.idle,
        peakRssMb: np.peak,
        mbPer1000Streams: np.per1000,
        completed: np.completed,
      },
    };
  } finally {
    for (const child of [bare, nestProxy, bareNest]) {
      if (child) {
        await stopChild(child.child);
      }
    }
    if (gw) {
      await stopChild(gw.child);
    }
    await stopChild(upstream.child);
  }
}
