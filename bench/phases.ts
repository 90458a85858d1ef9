/** The measured phases: latency, streams and load, each comparing direct with gateway. */
import autocannon from 'autocannon';
import { type Summary, round, summarize } from './stats';
import { HEADERS, JSON_BODY } from './bodies';
import { LATENCY_CASES, type LatencyCase, STREAM_CASES, type StreamCase } from './cases';
import { cpuTimeMs } from './children';
import {
  type Anomalies,
  type Leg,
  type Target,
  headersFor,
  interleave,
  note,
  timeCompletion,
  timeStream,
} from './client';
import {
  BURST,
  CHAT_PATH,
  LOAD,
  type PairCounts,
  SCALE,
  type Sampling,
  type Variant,
  log,
} from './settings';

export interface Comparison {
  direct: Summary;
  gateway: Summary;
  /** Gateway minus direct, percentile by percentile. */
  added: { p50: number; p90: number; p99: number; mean: number };
  /** Percentiles of the per-pair differences (gateway minus direct of the same pair). */
  pairedDelta: Summary;
}

export function compare(direct: number[], gateway: number[]): Comparison {
  const d = summarize(direct);
  const g = summarize(gateway);
  return {
    direct: d,
    gateway: g,
    added: {
      p50: round(g.p50 - d.p50),
      p90: round(g.p90 - d.p90),
      p99: round(g.p99 - d.p99),
      mean: round(g.mean - d.mean),
    },
    pairedDelta: summarize(gateway.map((v, i) => v - direct[i])),
  };
}

export interface LatencyComparison {
  /** The LATENCY_CASES entry. */
  name: string;
  path: string;
  latency: Comparison;
  /** A protected case: see ProtectionComparison. */
  protection?: ProtectionComparison;
}

/**
 * What a protection adds, from the rounds of a protected case (direct, unprotected,
 * protected): `unprotected` summarizes the gateway's answers to the request without the
 * tool; `added` the per-round differences, protected minus unprotected (ms).
 */
export interface ProtectionComparison {
  unprotected: Summary;
  added: Summary;
}

export function protectionComparison(
  unprotected: number[],
  protectedMs: number[],
): ProtectionComparison {
  return {
    unprotected: summarize(unprotected),
    added: summarize(protectedMs.map((v, i) => v - unprotected[i])),
  };
}

/** The legs of a case's rounds: direct then gateway, with `unprotected` between them if set. */
export function legsOf(c: { unprotected?: unknown }): Leg[] {
  return c.unprotected === undefined ? ['direct', 'gateway'] : ['direct', 'unprotected', 'gateway'];
}

export function latencyCounts(v: Variant, sampling: Sampling): PairCounts {
  return sampling === 'full'
    ? { warmup: v.latencyWarmupPairs, measured: v.latencyPairs }
    : v.shortLatencyPairs;
}

/** One latency case: warm-up rounds (answers checked), then measured rounds, interleaved. */
export async function measureLatency(
  v: Variant,
  c: LatencyCase,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
): Promise<LatencyComparison> {
  const counts = latencyCounts(v, c.sampling);
  const legs = legsOf(c);
  const run = (check: boolean): (() => Promise<number>)[] =>
    legs.map(
      (leg) => () => timeCompletion(leg === 'direct' ? direct : gateway, c, anomalies, check, leg),
    );
  await interleave(Math.ceil(counts.warmup * SCALE), run(true));
  const samples = await interleave(Math.ceil(counts.measured * SCALE), run(false));
  const [a, b] = [samples[0], samples[samples.length - 1]];
  return {
    name: c.name,
    path: c.path,
    latency: compare(a, b),
    ...(legs.length === 3 ? { protection: protectionComparison(samples[1], b) } : {}),
  };
}

/** Every entry of LATENCY_CASES, one after the other. */
export async function measureLatencies(
  v: Variant,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
): Promise<LatencyComparison[]> {
  const out: LatencyComparison[] = [];
  for (const c of LATENCY_CASES) {
    log(`[${v.name}] non-streamed ${c.name}, concurrency 1 ...`);
    out.push(await measureLatency(v, c, direct, gateway, anomalies));
  }
  return out;
}

export interface StreamComparison {
  /** The STREAM_CASES entry. */
  name: string;
  path: string;
  ttft: Comparison;
  total: Comparison;
  /** A protected case: see ProtectionComparison. */
  protection?: { ttft: ProtectionComparison; total: ProtectionComparison };
  /** The chat case: the Nest floor proxy against the same direct samples, in the same rounds. */
  floor?: { ttft: Comparison; total: Comparison };
}

/** The stream case that also goes through the Nest floor proxy (it relays chat only). */
export const FLOOR_STREAM_CASE = 'chat';

/**
 * One stream case: warm-up rounds, then measured rounds, direct and gateway interleaved;
 * with `floor` (the Nest floor proxy), it gets the direct request as a last leg of each round.
 */
export async function measureStream(
  v: Variant,
  c: StreamCase,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
  floor?: Target,
): Promise<StreamComparison> {
  const counts = v.streamPairs[c.sampling];
  const legs = legsOf(c).map(
    (leg) => () => timeStream(leg === 'direct' ? direct : gateway, c, anomalies, leg),
  );
  if (floor !== undefined) {
    legs.push(() => timeStream(floor, c, anomalies, 'direct'));
  }
  await interleave(Math.ceil(counts.warmup * SCALE), legs);
  const samples = await interleave(Math.ceil(counts.measured * SCALE), legs);
  const floorSamples = floor === undefined ? undefined : samples.pop();
  const ttft = samples.map((leg) => leg.map((s) => s.ttftMs));
  const total = samples.map((leg) => leg.map((s) => s.totalMs));
  const last = samples.length - 1;
  return {
    name: c.name,
    path: c.path,
    ttft: compare(ttft[0], ttft[last]),
    total: compare(total[0], total[last]),
    ...(samples.length === 3
      ? {
          protection: {
            ttft: protectionComparison(ttft[1], ttft[last]),
            total: protectionComparison(total[1], total[last]),
          },
        }
      : {}),
    ...(floorSamples === undefined
      ? {}
      : {
          floor: {
            ttft: compare(
              ttft[0],
              floorSamples.map((s) => s.ttftMs),
            ),
            total: compare(
              total[0],
              floorSamples.map((s) => s.totalMs),
            ),
          },
        }),
  };
}

/** Every entry of STREAM_CASES, one after the other; the chat case through `floor` too. */
export async function measureStreams(
  v: Variant,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
  floor?: Target,
): Promise<StreamComparison[]> {
  const out: StreamComparison[] = [];
  for (const c of STREAM_CASES) {
    log(`[${v.name}] ${c.name} stream, time to first content, concurrency 1 ...`);
    const viaFloor = c.name === FLOOR_STREAM_CASE ? floor : undefined;
    out.push(await measureStream(v, c, direct, gateway, anomalies, viaFloor));
  }
  return out;
}

/** What autocannon sends: one fixed request, over and over. */
export interface CannonRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export const CHAT_REQUEST: CannonRequest = { path: CHAT_PATH, headers: HEADERS, body: JSON_BODY };

export function cannon(
  t: Target,
  request: CannonRequest,
  connections: number,
  durationS: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: t.origin + request.path,
    method: 'POST',
    headers: headersFor(t, request.headers),
    body: request.body,
    connections,
    duration: Math.max(1, Math.round(durationS * SCALE)),
  });
}

/**
 * Short concurrent bursts of every request kind (each latency case, then each stream case,
 * with the request it sends to this target), to JIT-compile the hot paths first.
 */
export async function burst(t: Target): Promise<void> {
  const bursts: [string, CannonRequest, number][] = [
    ...LATENCY_CASES.map((c): [string, CannonRequest, number] => [
      `non-streamed ${c.name}`,
      (t.name === 'direct' ? c.direct : undefined) ?? c,
      c.burstS,
    ]),
    ...STREAM_CASES.map((c): [string, CannonRequest, number] => [
      `${c.name} stream`,
      (t.name === 'direct' ? c.direct : undefined) ?? c,
      c.burstS,
    ]),
  ];
  for (const [kind, request, seconds] of bursts) {
    const r = await cannon(t, request, BURST.connections, seconds);
    // Measuring a target that fails already under light load would be meaningless.
    if (r.errors + r.timeouts + r.non2xx > 0) {
      throw new Error(
        `${t.name}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx answers ` +
          `during the ${kind} warm-up burst`,
      );
    }
  }
}

export interface LoadResult {
  requestsPerSec: number;
  requestsTotal: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU time the gateway process used per request, in µs (gateway target; Linux only). */
  gatewayCpuUsPerRequest?: number;
  /**
   * The same for the fake upstream: a bare node:http server, so on the direct run it
   * calibrates how fast this machine is, and puts the gateway's figure in proportion.
   */
  upstreamCpuUsPerRequest?: number;
}

/** CPU time used per request, in µs, between two readings of cpuTimeMs. */
export function cpuPerRequest(
  before: number | undefined,
  after: number | undefined,
  requests: number,
): number | undefined {
  if (before === undefined || after === undefined || requests === 0) {
    return undefined;
  }
  return round(((after - before) * 1000) / requests, 1);
}

export async function measureLoad(
  t: Target,
  pids: { upstream?: number; gateway?: number },
  anomalies: Anomalies,
): Promise<LoadResult> {
  const w = await cannon(t, CHAT_REQUEST, LOAD.connections, LOAD.warmupS);
  if (w.errors + w.timeouts + w.non2xx > 0) {
    note(
      anomalies,
      `${t.name}: ${w.errors} errors, ${w.timeouts} timeouts, ${w.non2xx} non-2xx during the load warm-up`,
    );
  }
  const gatewayBefore = cpuTimeMs(pids.gateway);
  const upstreamBefore = cpuTimeMs(pids.upstream);
  const r = await cannon(t, CHAT_REQUEST, LOAD.connections, LOAD.durationS);
  const total = r.requests.total;
  return {
    requestsPerSec: round(r.requests.average, 1),
    requestsTotal: total,
    latencyMs: {
      mean: round(r.latency.mean, 3),
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
    },
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    gatewayCpuUsPerRequest: cpuPerRequest(gatewayBefore, cpuTimeMs(pids.gateway), total),
    upstreamCpuUsPerRequest: cpuPerRequest(upstreamBefore, cpuTimeMs(pids.upstream), total),
  };
}
