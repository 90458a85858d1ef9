/**
 * The headline table of `npm run bench`: the performance targets, each with this run's value,
 * whether it is met, and the previous run's value (the newest earlier results file in
 * bench/results), so that two runs compare line by line.
 */
import type { Comparison, LoadResult } from './phases';
import type { VariantResult } from './report';
import type { StreamsResult } from './streams';
import { round } from './stats';

export interface Headline {
  label: string;
  value: number;
  unit: string;
  /**
   * `max`: the value must not exceed `target`; `min`: it must reach it; `info`: a floor or
   * a figure shown for reference, with no target of its own.
   */
  bound: 'max' | 'min' | 'info';
  target: number;
}

function streamAdded(r: VariantResult | undefined, name: string): number {
  return r?.streams.find((s) => s.name === name)?.ttft.added.p50 ?? NaN;
}

const info = (label: string, value: number, unit: string): Headline => ({
  label,
  value: round(value, 3),
  unit,
  bound: 'info',
  target: NaN,
});

/**
 * Issue 29's targets for one gateway (the main one or a variant, `name` in the labels),
 * against the Nest floor proxy measured in the same rounds: added p50 and p99 at
 * concurrency 1 over the floor's (+0.15 ms, +0.5 ms), throughput at 64 connections as a
 * share of the floor's (0.75).
 */
function againstFloor(
  name: string,
  latency: Comparison | undefined,
  load: LoadResult | undefined,
  floor: { latency: Comparison; load: LoadResult },
): Headline[] {
  const over = (p: 'p50' | 'p99'): number =>
    round((latency?.added[p] ?? NaN) - floor.latency.added[p], 3);
  return [
    info(`${name}: added latency c=1, p50`, latency?.added.p50 ?? NaN, 'ms'),
    {
      label: `${name}: added p50 over Nest floor proxy's`,
      value: over('p50'),
      unit: 'ms',
      bound: 'max',
      target: 0.15,
    },
    info(`${name}: added latency c=1, p99`, latency?.added.p99 ?? NaN, 'ms'),
    {
      label: `${name}: added p99 over Nest floor proxy's`,
      value: over('p99'),
      unit: 'ms',
      bound: 'max',
      target: 0.5,
    },
    {
      label: `${name}: throughput @64 / Nest floor proxy`,
      value: round((load?.requestsPerSec ?? NaN) / floor.load.requestsPerSec, 3),
      unit: 'x',
      bound: 'min',
      target: 0.75,
    },
  ];
}

/**
 * Issue 29's targets, read off a run (its first variant is the 0 ms upstream), each against
 * a floor measured in the same run, with the floors themselves as `info` rows.
 */
export function headlines(results: VariantResult[], capacity: StreamsResult): Headline[] {
  const zero = results[0];
  const slow = results[1];
  const f = zero.floor;
  const floor = { latency: f.nestProxy, load: zero.load.nestProxy };
  const chatTtft = streamAdded(zero, 'chat');
  const floorTtft = zero.streams.find((s) => s.name === 'chat')?.floor?.ttft.added.p50 ?? NaN;
  // Added time spread over the stream's chunks: whole-stream added minus first-token added.
  const slowChat = slow?.streams.find((s) => s.name === 'chat');
  const betweenChunks = slowChat ? slowChat.total.added.p50 - slowChat.ttft.added.p50 : NaN;
  const translated = (name: string): Headline => ({
    label: `${name} added TTFT / pass-through's`,
    value: round(streamAdded(zero, name) / chatTtft, 2),
    unit: 'x',
    bound: 'max',
    target: 1.3,
  });
  const main = f.gatewayLabel;
  const others = Object.keys(f.others);
  const pglite = main === 'PGlite' ? f.gateway : f.others.PGlite;
  const off = f.others['KEY_STORE=off'];
  const bareNest = capacity.bareNest;
  return [
    info('floor: bare proxy added c=1, p50', f.bare.added.p50, 'ms'),
    info('floor: bare proxy added c=1, p99', f.bare.added.p99, 'ms'),
    info('floor: Nest floor proxy added c=1, p50', f.nestProxy.added.p50, 'ms'),
    info('floor: Nest floor proxy added c=1, p99', f.nestProxy.added.p99, 'ms'),
    info('floor: bare proxy @64', zero.load.bare.requestsPerSec, 'req/s'),
    info('floor: Nest floor proxy @64', zero.load.nestProxy.requestsPerSec, 'req/s'),
    info(
      'floor: Nest floor proxy @64 / bare proxy',
      zero.load.nestProxy.requestsPerSec / zero.load.bare.requestsPerSec,
      'x',
    ),
    ...againstFloor(main, f.gateway, zero.load.gateway, floor),
    ...others.flatMap((o) => againstFloor(o, f.others[o], zero.load.others[o], floor)),
    ...(pglite !== undefined && off !== undefined
      ? [
          {
            label: 'PGlite added p99 over KEY_STORE=off',
            value: round(pglite.added.p99 - off.added.p99, 3),
            unit: 'ms',
            bound: 'max' as const,
            target: 0.3,
          },
        ]
      : []),
    info('floor: Nest floor proxy added TTFT, p50', floorTtft, 'ms'),
    { label: 'added TTFT, p50', value: round(chatTtft, 3), unit: 'ms', bound: 'max', target: 0.5 },
    {
      label: 'added between chunks (20 ms upstream), p50',
      value: round(betweenChunks, 3),
      unit: 'ms',
      bound: 'max',
      target: 0.5,
    },
    translated('chat->messages'),
    translated('messages->chat'),
    translated('chat->responses'),
    {
      label: `streams completed of ${capacity.streams}`,
      value: capacity.completed,
      unit: '',
      bound: 'min',
      target: capacity.streams,
    },
    info(
      'floor: Nest floor proxy MB per 1,000 streams',
      capacity.nestProxy?.mbPer1000Streams ?? NaN,
      'MB',
    ),
    {
      label: 'memory per 1,000 streams above in-service idle',
      value: capacity.mbPer1000Streams,
      unit: 'MB',
      bound: 'max',
      target: 40,
    },
    info(
      'floor: Nest floor proxy MB per 1,000, marginal',
      capacity.nestProxy?.marginalMbPer1000Streams ?? NaN,
      'MB',
    ),
    {
      label: 'memory per 1,000 streams, marginal',
      value: capacity.marginalMbPer1000Streams ?? NaN,
      unit: 'MB',
      bound: 'max',
      target: 40,
    },
    info(
      'floor: Nest floor proxy live heap per stream',
      capacity.nestProxy?.heapKbPerStream ?? NaN,
      'KB',
    ),
    info('live heap per stream', capacity.heapKbPerStream ?? NaN, 'KB'),
    info('floor: bare Nest idle RSS (2 s after ready)', bareNest?.idleRssMb ?? NaN, 'MB'),
    info('idle RSS (2 s after ready)', capacity.idleRssMb, 'MB'),
    {
      label: 'idle RSS above bare Nest (2 s after ready)',
      value: round(capacity.idleRssMb - (bareNest?.idleRssMb ?? NaN), 1),
      unit: 'MB',
      bound: 'max',
      target: 40,
    },
    info('floor: bare Nest idle RSS (at rest)', bareNest?.settledIdleRssMb ?? NaN, 'MB'),
    info('idle RSS (30 s at rest)', capacity.settledIdleRssMb, 'MB'),
    {
      label: 'idle RSS above bare Nest (at rest)',
      value: round(capacity.settledIdleRssMb - (bareNest?.settledIdleRssMb ?? NaN), 1),
      unit: 'MB',
      bound: 'max',
      target: 40,
    },
    {
      label: 'cold start to ready',
      value: capacity.coldStartMs,
      unit: 'ms',
      bound: 'max',
      target: 1000,
    },
  ];
}

/** Whether a target is met; an `info` row has none (and a missing value meets nothing). */
export function met(h: Headline): boolean | undefined {
  if (h.bound === 'info') {
    return undefined;
  }
  return h.bound === 'max' ? h.value <= h.target : h.value >= h.target;
}

/** The table: target, this run, met, previous run. */
export function headlineTable(now: Headline[], before: Headline[] | undefined): string {
  const prev = new Map((before ?? []).map((h) => [h.label, h.value]));
  const cell = (v: number | undefined): string =>
    v === undefined || Number.isNaN(v) ? '-' : String(v);
  const lines = [
    '',
    'Targets (issue 29; 0 ms upstream unless said; each against a floor measured in this run)',
    `    ${'measure'.padEnd(52)}${'target'.padStart(10)}${'this run'.padStart(11)}${'met'.padStart(5)}${'previous'.padStart(11)}`,
  ];
  for (const h of now) {
    const target = h.bound === 'info' ? '' : `${h.bound === 'max' ? '<=' : '>='} ${h.target}`;
    const ok = met(h);
    const verdict = ok === undefined ? '' : ok ? 'yes' : 'NO';
    lines.push(
      `    ${`${h.label}${h.unit ? ` (${h.unit})` : ''}`.padEnd(52)}${target.padStart(10)}${cell(h.value).padStart(11)}${verdict.padStart(5)}${cell(prev.get(h.label)).padStart(11)}`,
    );
  }
  return lines.join('\n');
}
