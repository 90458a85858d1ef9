/**
 * The capacity phase of `npm run bench`, on a gateway of its own:
 *   - cold start: from spawning `node dist/main.js` to the first 200 of /health/ready;
 *   - idle RSS: the gateway's resident memory once ready and idle for IDLE_SETTLE_MS, after
 *     SETTLED_IDLE_MS of rest, and again after WARM_UP_STREAMS first streams (what a
 *     replica in service holds at rest);
 *   - STREAMS.count concurrent slow chat streams (the fake upstream spaces the content
 *     chunks STREAMS.chunkIntervalMs apart), opened in two waves of half each: how many
 *     complete with every chunk and [DONE]; the gateway's peak RSS above its in-service
 *     idle per 1,000 streams; and the marginal figure, RSS from the first wave's plateau
 *     to the second's (both waves open) per 1,000 streams;
 *   - then the live heap per open stream, read after full collections (heap-probe.ts), for
 *     the gateway and the Nest floor proxy: the figure that tells two builds apart.
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
  freePort,
  startGateway,
  startUpstream,
  stopChild,
  writeCatalog,
} from './children';
import { type BenchDatabase, deployedEnv, issueKey } from './deployment';
import { type BareChild, startBare } from './floor';
import { HeapProbe, inspectPortArg } from './heap-probe';
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
  /**
   * MB per 1,000 streams from the first half of the streams to all of them (see
   * marginalPer1000); NaN when a stream ended before the reading. Missing in older files.
   */
  marginalMbPer1000Streams?: number;
  /** KB of live heap per open stream, after full collections (heapPerStreamKb). */
  heapKbPerStream?: number;
  bare: {
    idleRssMb: number;
    peakRssMb: number;
    mbPer1000Streams: number;
    marginalMbPer1000Streams?: number;
    completed: number;
  };
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
    marginalMbPer1000Streams?: number;
    heapKbPerStream?: number;
    completed: number;
  };
}

const IDLE_SETTLE_MS = 2000;
const SETTLED_IDLE_MS = 30_000;
const WARM_UP_STREAMS = 50;
/** Streams held open while the live heap is read (see heapPerStreamKb). */
const HEAP_STREAMS = 1000;

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

/** How long RSS is sampled once every stream of a wave has its response head. */
const PLATEAU_MS = 1000;

interface Opened {
  completed: number;
  failures: Record<string, number>;
  peakRssMb: number;
  /** Highest RSS while each wave was open (the second with the first still open). */
  plateauRssMb: number[];
  /** False when a stream ended before the last wave's plateau was read: no marginal figure. */
  heldThrough: boolean;
  s: number;
}

/**
 * Opens `count` streams against `origin` in `waves` waves: each wave all at once, the next
 * once every stream of the one before has its response head and RSS has been sampled for
 * PLATEAU_MS. Resolves with the outcome counts once all have ended.
 */
async function openStreams(
  origin: string,
  count: number,
  pid: number | undefined,
  waves = 1,
  atPlateau?: (wave: number) => Promise<void>,
): Promise<Opened> {
  // One agent per wave: a later wave never reuses a socket an earlier stream has ended on
  // (the server may be closing it), and every stream has a connection of its own.
  const agents = Array.from(
    { length: waves },
    () =>
      new Agent({
        connections: count,
        pipelining: 1,
        keepAliveTimeout: 10_000,
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      }),
  );
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
  let heads = 0;
  let ended = 0;
  const one = async (dispatcher: Agent): Promise<void> => {
    let headed = false;
    try {
      const res = await request(origin + CHAT_PATH, {
        method: 'POST',
        headers: HEADERS,
        body,
        dispatcher,
      });
      heads++;
      headed = true;
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
      // A stream cut after its head was counted once already: the wave would move on early.
      if (!headed) {
        heads++;
      }
      fail((e as { code?: string }).code ?? (e as Error).message);
    } finally {
      ended++;
    }
  };
  const all: Promise<void>[] = [];
  const plateauRssMb: number[] = [];
  for (let w = 0; w < waves; w++) {
    const size = Math.round((count * (w + 1)) / waves) - all.length;
    for (let i = 0; i < size; i++) {
      all.push(one(agents[w]));
    }
    while (heads < all.length) {
      await sleep(20);
    }
    let plateau = rssMb(pid);
    for (let t = 0; t < PLATEAU_MS; t += 50) {
      await sleep(50);
      plateau = Math.max(plateau, rssMb(pid));
    }
    plateauRssMb.push(plateau);
    await atPlateau?.(w);
  }
  const heldThrough = ended === 0;
  await Promise.all(all);
  clearInterval(sampler);
  await Promise.all(agents.map((a) => a.close()));
  return {
    completed,
    failures,
    peakRssMb: peak,
    plateauRssMb,
    heldThrough,
    s: Number(process.hrtime.bigint() - start) / 1e9,
  };
}

/**
 * MB per 1,000 streams between the two waves' plateaus: what one more stream costs, without
 * what any load costs once (the young generation growing to its full size, code compiled on
 * first use), which the figure above in-service idle counts or not depending on whether the
 * idle reading came before or after V8 shrank the young generation again.
 */
/**
 * KB of live heap per open stream: the heap after full collections with HEAP_STREAMS
 * streams open, less the same at rest, over HEAP_STREAMS. NaN when a stream ended first.
 */
async function heapPerStreamKb(origin: string, pid: number, inspectPort: number): Promise<number> {
  const count = Math.max(100, Math.round(HEAP_STREAMS * SCALE));
  // The run's other figures stand without this one (the port taken, say).
  const without = (e: unknown): number => {
    log(`[capacity] no live heap figure: ${(e as Error).message}`);
    return NaN;
  };
  let probe: HeapProbe;
  try {
    probe = await HeapProbe.open(pid, inspectPort);
  } catch (e) {
    return without(e);
  }
  try {
    const atRest = await probe.liveHeapBytes();
    let open = NaN;
    let failed: unknown;
    // Caught here, so that the open streams are still read to their end.
    const r = await openStreams(origin, count, pid, 1, () =>
      probe.liveHeapBytes().then(
        (bytes) => void (open = bytes),
        (e: unknown) => void (failed = e),
      ),
    );
    if (failed !== undefined) {
      return without(failed);
    }
    return r.heldThrough ? round((open - atRest) / 1024 / count, 1) : NaN;
  } catch (e) {
    return without(e);
  } finally {
    probe.close();
  }
}

function marginalPer1000(r: Opened, count: number): number {
  if (!r.heldThrough || r.plateauRssMb.length < 2) {
    return NaN;
  }
  const [first, second] = r.plateauRssMb;
  return round(((second - first) * 1000) / (count - Math.round(count / 2)), 1);
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
    const inspectPorts = { gateway: await freePort(), nestProxy: await freePort() };
    const spawned = process.hrtime.bigint();
    gw = await startGateway(dir, writeCatalog(dir, upstream.port), {
      env: deployedEnv(db),
      readyPollMs: 5,
      nodeArgs: [inspectPortArg(inspectPorts.gateway)],
    });
    const coldStartMs = round(Number(process.hrtime.bigint() - spawned) / 1e6, 0);
    const key = await issueKey(gw.port);
    useKey(key);
    await sleep(IDLE_SETTLE_MS);
    const idleRssMb = rssMb(gw.child.pid);
    // The Nest floors rest beside the gateway, so that their settled figures are read at the
    // same moment (their start-up, a second or two, comes off their rest).
    const floorsUp = Date.now();
    nestProxy = await startBare(upstream.port, key, 'nest-proxy.ts', [
      inspectPortArg(inspectPorts.nestProxy),
    ]);
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
    const g = await openStreams(`http://127.0.0.1:${gw.port}`, count, gw.child.pid, 2);
    // Last, once its RSS figures are read: the inspector it opens is not the gateway's.
    const heapKb = await heapPerStreamKb(
      `http://127.0.0.1:${gw.port}`,
      gw.child.pid as number,
      inspectPorts.gateway,
    );
    const per1000 = (peak: number, idle: number): number =>
      round(((peak - idle) * 1000) / count, 1);
    const floor = async (
      child: BareChild,
    ): Promise<{
      idle: number;
      peak: number;
      per1000: number;
      marginal: number;
      completed: number;
    }> => {
      const origin = `http://127.0.0.1:${child.port}`;
      await openStreams(origin, WARM_UP_STREAMS, child.child.pid);
      await sleep(IDLE_SETTLE_MS);
      const idle = rssMb(child.child.pid);
      const r = await openStreams(origin, count, child.child.pid, 2);
      return {
        idle,
        peak: r.peakRssMb,
        per1000: per1000(r.peakRssMb, idle),
        marginal: marginalPer1000(r, count),
        completed: r.completed,
      };
    };
    const np = await floor(nestProxy);
    const npHeapKb = await heapPerStreamKb(
      `http://127.0.0.1:${nestProxy.port}`,
      nestProxy.child.pid as number,
      inspectPorts.nestProxy,
    );
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
      marginalMbPer1000Streams: marginalPer1000(g, count),
      heapKbPerStream: heapKb,
      bare: {
        idleRssMb: b.idle,
        peakRssMb: b.peak,
        mbPer1000Streams: b.per1000,
        marginalMbPer1000Streams: b.marginal,
        completed: b.completed,
      },
      bareNest: { idleRssMb: nestIdle[1], settledIdleRssMb: nestSettled[1] },
      nestProxy: {
        idleRssMb: nestIdle[0],
        settledIdleRssMb: nestSettled[0],
        servingIdleRssMb: np.idle,
        peakRssMb: np.peak,
        mbPer1000Streams: np.per1000,
        marginalMbPer1000Streams: np.marginal,
        heapKbPerStream: npHeapKb,
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
