/** The report: the tables printed at the end and the results file. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { type MicroResult, microTable } from './micro';
import type { Summary } from './stats';
import { LONG_SYSTEM_PROMPT } from './bodies';
import { LATENCY_CASES, PROTECTIONS, STREAM_CASES } from './cases';
import {
  type Comparison,
  type LatencyComparison,
  type LoadResult,
  type ProtectionComparison,
  type StreamComparison,
} from './phases';
import {
  BURST,
  CHUNK_COUNT,
  LOAD,
  LOG_LEVEL,
  RATE_LIMIT_ENV,
  ROOT,
  SCALE,
  type Variant,
} from './settings';
import type { LogSummary } from './children';
import type { FloorLatency } from './floor';
import type { StreamsResult } from './streams';
import { type Headline, headlineTable, headlines } from './targets';

/** What one upstream variant measured. */
export interface VariantResult {
  variant: Variant;
  /** One entry per LATENCY_CASES entry, in order. */
  latencies: LatencyComparison[];
  /** One entry per STREAM_CASES entry, in order. */
  streams: StreamComparison[];
  /** Non-streamed chat through the bare proxy and the gateway, in the same rounds. */
  floor: FloorLatency;
  load: {
    direct: LoadResult;
    bare: LoadResult;
    nestProxy: LoadResult;
    nest: LoadResult;
    gateway: LoadResult;
    /** The gateway's variants (0 ms upstream): its other database, KEY_STORE=off. */
    others: Record<string, LoadResult>;
  };
  anomalies: Record<string, number>;
  gatewayLog: LogSummary;
  /** gateway_requests_total read from /metrics at the end: proof that metrics were on. */
  metricsCounted: number;
}

export function fmt(value: number | undefined, digits = 3): string {
  return value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
}

export function signed(value: number, digits = 3): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

export function row(label: string, direct = '', gateway = '', added = ''): string {
  return `    ${label.padEnd(32)}${direct.padStart(12)}${gateway.padStart(12)}${added.padStart(14)}`;
}

export function comparisonRows(label: string, c: Comparison): string[] {
  return [
    row(`${label} p50 (ms)`, fmt(c.direct.p50), fmt(c.gateway.p50), signed(c.added.p50)),
    row(`${label} p99 (ms)`, fmt(c.direct.p99), fmt(c.gateway.p99), signed(c.added.p99)),
    row(
      `${label} paired Δ p50 / p99`,
      '',
      '',
      `${fmt(c.pairedDelta.p50)} / ${fmt(c.pairedDelta.p99)}`,
    ),
  ];
}

/** `<path>`, plus the direct call's path when it differs (translated paths). */
export function paths(
  c: { path: string; direct?: { path: string } } | undefined,
  path: string,
): string {
  const directPath = c?.direct?.path;
  return directPath === undefined || directPath === path ? path : `${path} (direct: ${directPath})`;
}

/**
 * A protected case's lines: the gateway without the tool against the same direct samples,
 * then what the tool adds (per-round differences), for each measure.
 */
export function protectionRows(measures: [string, Summary, ProtectionComparison][]): string[] {
  return [
    ...measures.map(([label, direct, p]) =>
      row(
        `${label} p50, no tool (ms)`,
        fmt(direct.p50),
        fmt(p.unprotected.p50),
        signed(p.unprotected.p50 - direct.p50),
      ),
    ),
    ...measures.map(([label, , p]) =>
      row(
        `protection Δ ${label} p50 / p99`,
        '',
        '',
        `${signed(p.added.p50)} / ${signed(p.added.p99)}`,
      ),
    ),
  ];
}

/** `n=<count> pairs`, or rounds of three for a protected case. */
export function counted(count: number, protectedCase: boolean): string {
  return protectedCase
    ? `n=${count} rounds: direct, gateway without the tool, with it`
    : `n=${count} pairs`;
}

export function latencyRows(l: LatencyComparison): string[] {
  const c = LATENCY_CASES.find((x) => x.name === l.name);
  return [
    `  Non-stream ${l.name} ${paths(c, l.path)}, concurrency 1 (${counted(l.latency.direct.count, l.protection !== undefined)})`,
    ...comparisonRows('latency', l.latency),
    ...(l.protection === undefined
      ? []
      : protectionRows([['latency', l.latency.direct, l.protection]])),
  ];
}

export function streamRows(s: StreamComparison): string[] {
  const c = STREAM_CASES.find((x) => x.name === s.name);
  const direct = c?.direct?.contentEventLabel;
  const label =
    (c?.contentEventLabel ?? '') +
    (direct === undefined || direct === c?.contentEventLabel ? '' : `; direct: ${direct}`);
  return [
    `  Stream ${s.name} ${paths(c, s.path)}, concurrency 1 (${counted(s.ttft.direct.count, s.protection !== undefined)}; TTFT: ${label})`,
    ...comparisonRows('TTFT', s.ttft),
    row(
      'whole stream p50 (ms)',
      fmt(s.total.direct.p50),
      fmt(s.total.gateway.p50),
      signed(s.total.added.p50),
    ),
    ...(s.floor === undefined
      ? []
      : [
          row(
            'Nest floor proxy TTFT p50 (ms)',
            fmt(s.floor.ttft.direct.p50),
            fmt(s.floor.ttft.gateway.p50),
            signed(s.floor.ttft.added.p50),
          ),
          row(
            'Nest floor proxy TTFT p99 (ms)',
            fmt(s.floor.ttft.direct.p99),
            fmt(s.floor.ttft.gateway.p99),
            signed(s.floor.ttft.added.p99),
          ),
          row(
            'Nest floor proxy whole p50 (ms)',
            fmt(s.floor.total.direct.p50),
            fmt(s.floor.total.gateway.p50),
            signed(s.floor.total.added.p50),
          ),
        ]),
    ...(s.protection === undefined
      ? []
      : protectionRows([
          ['TTFT', s.ttft.direct, s.protection.ttft],
          ['whole', s.total.direct, s.protection.total],
        ])),
  ];
}

/**
 * The floor: what a bare proxy, the Nest floor proxy and a bare Nest app do on the same
 * machine in the same run, beside the gateway and its variants.
 */
export function floorRows(r: VariantResult): string[] {
  const f = r.floor;
  const l = r.load;
  const p50p99 = (c: Comparison): string => `${fmt(c.added.p50)} / ${fmt(c.added.p99)}`;
  const rps = (x: LoadResult | undefined): string =>
    x === undefined ? '-' : `${fmt(x.requestsPerSec, 0)} (${fmt(x.gatewayCpuUsPerRequest, 0)})`;
  const others = Object.keys(f.others ?? {});
  return [
    `  Floor: non-streamed chat, concurrency 1, all interleaved: added p50 / p99 (ms)`,
    row('bare node:http + undici proxy', '', p50p99(f.bare)),
    row('Nest floor proxy', '', p50p99(f.nestProxy)),
    // The bare Nest app answers at once: against a slow upstream it is no floor.
    ...(r.variant.latencyMs === 0 ? [row('bare Nest (answers itself)', '', p50p99(f.nest))] : []),
    row('gateway', '', p50p99(f.gateway)),
    ...others.map((o) => row(`gateway, ${o}`, '', p50p99(f.others[o]))),
    `  Floor: ${LOAD.connections} connections, requests/s (CPU per request, µs)`,
    row('bare node:http + undici proxy', '', rps(l.bare)),
    row('Nest floor proxy', '', rps(l.nestProxy)),
    row('bare Nest app, no work', '', rps(l.nest)),
    row('gateway', '', rps(l.gateway)),
    ...others.map((o) => row(`gateway, ${o}`, '', rps(l.others?.[o]))),
    row('gateway / bare proxy', '', fmt(l.gateway.requestsPerSec / l.bare.requestsPerSec, 3)),
    row(
      'gateway / Nest floor proxy',
      '',
      fmt(l.gateway.requestsPerSec / l.nestProxy.requestsPerSec, 3),
    ),
    row('metrics: gateway_requests_total', '', String(r.metricsCounted)),
  ];
}

/** A capacity row: bare proxy, Nest floor proxy, bare Nest, gateway. */
function row4(label: string, cells: (string | number | undefined)[]): string {
  const text = (v: string | number | undefined): string =>
    typeof v === 'number' ? fmt(v, 1) : (v ?? '');
  return `    ${label.padEnd(32)}${cells.map((v) => text(v).padStart(12)).join('')}`;
}

/** The capacity phase: cold start, idle memory, many concurrent streams. */
export function capacityRows(c: StreamsResult): string {
  const failures = Object.entries(c.failures)
    .map(([k, v]) => `${k} x${v}`)
    .join(', ');
  const np = c.nestProxy;
  const bn = c.bareNest;
  return [
    '',
    `Capacity: ${c.streams} concurrent chat streams of ${CHUNK_COUNT} chunks, ${c.durationS} s`,
    row4('', ['bare proxy', 'Nest proxy', 'bare Nest', 'gateway']),
    row4('cold start to ready (ms)', ['', '', '', fmt(c.coldStartMs, 0)]),
    row4('idle RSS (MB)', [c.bare.idleRssMb, np?.idleRssMb, bn?.idleRssMb, c.idleRssMb]),
    row4('idle RSS after 30 s at rest (MB)', [
      '',
      np?.settledIdleRssMb,
      bn?.settledIdleRssMb,
      c.settledIdleRssMb,
    ]),
    row4('idle RSS after 50 streams (MB)', ['', np?.servingIdleRssMb, '', c.servingIdleRssMb]),
    row4('peak RSS (MB)', [c.bare.peakRssMb, np?.peakRssMb, '', c.peakRssMb]),
    row4('MB per 1,000 streams above idle', [
      c.bare.mbPer1000Streams,
      np?.mbPer1000Streams,
      '',
      c.mbPer1000Streams,
    ]),
    row4('MB per 1,000 streams, marginal', [
      c.bare.marginalMbPer1000Streams,
      np?.marginalMbPer1000Streams,
      '',
      c.marginalMbPer1000Streams,
    ]),
    row4('live heap per stream (KB)', ['', np?.heapKbPerStream, '', c.heapKbPerStream]),
    row4('streams completed', [
      String(c.bare.completed),
      String(np?.completed ?? '-'),
      '',
      String(c.completed),
    ]),
    ...(failures ? [`    failures: ${failures}`] : []),
  ].join('\n');
}

export function loadRows(load: VariantResult['load']): string[] {
  const { direct: d, gateway: g } = load;
  const change = ((g.requestsPerSec - d.requestsPerSec) / d.requestsPerSec) * 100;
  const counts = (r: LoadResult): string => `${r.non2xx}/${r.errors}/${r.timeouts}`;
  return [
    row('requests/s', fmt(d.requestsPerSec, 0), fmt(g.requestsPerSec, 0), `${signed(change, 1)}%`),
    row(
      'latency p50 (ms)',
      fmt(d.latencyMs.p50, 0),
      fmt(g.latencyMs.p50, 0),
      signed(g.latencyMs.p50 - d.latencyMs.p50, 0),
    ),
    row(
      'latency p99 (ms)',
      fmt(d.latencyMs.p99, 0),
      fmt(g.latencyMs.p99, 0),
      signed(g.latencyMs.p99 - d.latencyMs.p99, 0),
    ),
    row('non-2xx / errors / timeouts', counts(d), counts(g)),
    row('gateway CPU per request (µs)', '', fmt(g.gatewayCpuUsPerRequest, 0)),
    row(
      'upstream CPU per request (µs)',
      fmt(d.upstreamCpuUsPerRequest, 0),
      fmt(g.upstreamCpuUsPerRequest, 0),
    ),
  ];
}

export function problemLines(r: VariantResult): string[] {
  const gl = r.gatewayLog;
  const lines = [
    `  gateway log: ${gl.lines} lines ${JSON.stringify(gl.byLevel)}, non-200 requests: ${gl.nonOkAccessLines}`,
    ...Object.entries(gl.nonOkRequests).map(([what, count]) => `    non-200 x${count}: ${what}`),
    ...gl.nonOkSamples.map((l) => `    e.g. ${l}`),
    ...gl.problems.map((p) => `    ${p}`),
  ];
  for (const [message, count] of Object.entries(r.anomalies)) {
    lines.push(`  ANOMALY x${count}: ${message}`);
  }
  return lines;
}

export function variantTable(r: VariantResult): string {
  const v = r.variant;
  const seconds = Math.max(1, Math.round(LOAD.durationS * SCALE));
  return [
    '',
    `${v.name} to first byte; streams: ${CHUNK_COUNT} content chunks ${v.chunkIntervalMs} ms apart`,
    row('', 'direct', 'gateway', 'added'),
    ...r.latencies.flatMap(latencyRows),
    ...r.streams.flatMap(streamRows),
    `  Non-stream chat, ${LOAD.connections} connections, ${seconds} s (autocannon, 1 ms resolution)`,
    ...loadRows(r.load),
    ...floorRows(r),
    ...problemLines(r),
  ].join('\n');
}

export interface Environment {
  node: string;
  cpus: number;
  cpuModel: string;
  platform: string;
  logLevel: string;
  gitCommit?: string;
  gitDirty?: boolean;
  scale: number;
}

export function environment(): Environment {
  const git = (args: string[]): string | undefined => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  const status = git(['status', '--porcelain', '--', 'src']);
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    platform: `${process.platform}-${process.arch}`,
    logLevel: LOG_LEVEL,
    gitCommit: git(['rev-parse', '--short', 'HEAD']),
    gitDirty: status === undefined ? undefined : status !== '',
    scale: SCALE,
  };
}

export function printReport(
  env: Environment,
  micro: MicroResult,
  results: VariantResult[],
  capacity: StreamsResult,
  database: string,
  previous: Headline[] | undefined,
): void {
  const head = [
    'Reasoning Inference Gateway - overhead benchmark',
    `node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), ${env.platform}`,
    `gateway: node dist/main.js, NODE_ENV=production, LOG_LEVEL=${env.logLevel} (one access-log line per request, to a file)`,
    `as deployed: a key issued into ${database}, the usage ledger, metrics, two deployments + a fallback for the chat model, retries`,
    `commit ${env.gitCommit ?? '?'}${env.gitDirty ? ' + uncommitted changes in src/' : ''}; all processes share the same ${env.cpus} CPUs`,
  ];
  if (env.scale !== 1) {
    head.push(`BENCH_SCALE=${env.scale}: reduced counts, not for publication`);
  }
  process.stdout.write(
    `${head.join('\n')}\n${microTable(micro)}\n${results.map(variantTable).join('\n')}\n` +
      `${capacityRows(capacity)}\n${headlineTable(headlines(results, capacity), previous)}\n`,
  );
}

/**
 * The headline values of the newest results file of the same BENCH_SCALE (a smoke run is
 * not compared with a full one), to set beside this run's.
 */
export function previousResults(scale: number): Headline[] | undefined {
  const dir = join(__dirname, 'results');
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .reverse()
    : [];
  for (const file of files) {
    try {
      const saved = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
        environment?: { scale?: number };
        headlines?: Headline[];
      };
      if (saved.environment?.scale === scale && saved.headlines !== undefined) {
        return saved.headlines;
      }
    } catch {
      // an unreadable file is no comparison
    }
  }
  return undefined;
}

export function writeResults(
  env: Environment,
  micro: MicroResult,
  results: VariantResult[],
  capacity: StreamsResult,
  database: string,
): string {
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  // Colons are not allowed in Windows file names.
  const path = join(dir, `${new Date().toISOString().replace(/:/g, '-')}.json`);
  const settings = {
    chunkCount: CHUNK_COUNT,
    load: LOAD,
    burst: BURST,
    rateLimitEnv: RATE_LIMIT_ENV,
    latencyCases: LATENCY_CASES.map((c) => ({
      name: c.name,
      path: c.path,
      directPath: c.direct?.path ?? c.path,
      sampling: c.sampling,
      ...(c.protections === undefined ? {} : { protections: c.protections }),
      ...(c.unprotected === undefined ? {} : { unprotectedPath: c.unprotected.path }),
    })),
    streamCases: STREAM_CASES.map((c) => ({
      name: c.name,
      path: c.path,
      ttftStopsAt: c.contentEventLabel,
      directPath: c.direct?.path ?? c.path,
      directTtftStopsAt: c.direct?.contentEventLabel ?? c.contentEventLabel,
      sampling: c.sampling,
      ...(c.protections === undefined ? {} : { protections: c.protections }),
      ...(c.unprotected === undefined ? {} : { unprotectedPath: c.unprotected.path }),
    })),
    protectedRequests: {
      systemPromptChars: LONG_SYSTEM_PROMPT.length,
      tools: Object.fromEntries(Object.entries(PROTECTIONS).map(([k, p]) => [k, p.tool])),
    },
  };
  writeFileSync(
    path,
    `${JSON.stringify({ environment: env, settings: { ...settings, database }, headlines: headlines(results, capacity), micro, results, capacity }, null, 2)}\n`,
  );
  return path;
}

// ---------------------------------------------------------------------------------------
