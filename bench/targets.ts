/**
 * The headline table of `npm run bench`: the performance targets, each with this run's value,
 * whether it is met, and the previous run's value (the newest earlier results file in
 * bench/results), so that two runs compare line by line.
 */
import type { VariantResult } from './report';
import type { StreamsResult } from './streams';
import { round } from './stats';

export interface Headline {
  label: string;
  value: number;
  unit: string;
  /** `max`: the value must not exceed `target`; `min`: it must reach it. */
  bound: 'max' | 'min';
  target: number;
}

function streamAdded(r: VariantResult | undefined, name: string): number {
  return r?.streams.find((s) => s.name === name)?.ttft.added.p50 ?? NaN;
}

/** The issue's targets, read off a run (its first variant is the 0 ms upstream). */
export function headlines(results: VariantResult[], capacity: StreamsResult): Headline[] {
  const zero = results[0];
  const slow = results[1];
  const chat = zero.latencies[0].latency.added;
  const chatTtft = streamAdded(zero, 'chat');
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
  return [
    { label: 'added latency c=1, p50', value: chat.p50, unit: 'ms', bound: 'max', target: 0.3 },
    { label: 'added latency c=1, p99', value: chat.p99, unit: 'ms', bound: 'max', target: 1 },
    {
      label: 'bare proxy added latency, p50 (floor)',
      value: zero.floor.bare.added.p50,
      unit: 'ms',
      bound: 'max',
      target: 0.3,
    },
    {
      label: 'Nest floor (bare proxy + bare Nest), p50',
      value: round(zero.floor.bare.added.p50 + zero.floor.nest.added.p50, 3),
      unit: 'ms',
      bound: 'max',
      target: 0.3,
    },
    {
      label: 'Nest floor p99 (sum of p99s: upper bound)',
      value: round(zero.floor.bare.added.p99 + zero.floor.nest.added.p99, 3),
      unit: 'ms',
      bound: 'max',
      target: 1,
    },
    {
      label: 'throughput @64 / bare proxy',
      value: round(zero.load.gateway.requestsPerSec / zero.load.bare.requestsPerSec, 3),
      unit: 'x',
      bound: 'min',
      target: 0.6,
    },
    {
      label: 'bare Nest (no work) @64 / bare proxy',
      value: round(zero.load.nest.requestsPerSec / zero.load.bare.requestsPerSec, 3),
      unit: 'x',
      bound: 'min',
      target: 0.6,
    },
    {
      label: 'throughput @64 / bare Nest',
      value: round(zero.load.gateway.requestsPerSec / zero.load.nest.requestsPerSec, 3),
      unit: 'x',
      bound: 'min',
      target: 0.6,
    },
    { label: 'added TTFT, p50', value: chatTtft, unit: 'ms', bound: 'max', target: 1 },
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
    {
      label: 'memory per 1,000 streams above in-service idle',
      value: capacity.mbPer1000Streams,
      unit: 'MB',
      bound: 'max',
      target: 50,
    },
    {
      label: 'idle RSS (2 s after ready)',
      value: capacity.idleRssMb,
      unit: 'MB',
      bound: 'max',
      target: 80,
    },
    {
      label: 'idle RSS (30 s at rest)',
      value: capacity.settledIdleRssMb,
      unit: 'MB',
      bound: 'max',
      target: 80,
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

export function met(h: Headline): boolean {
  return h.bound === 'max' ? h.value <= h.target : h.value >= h.target;
}

/** The table: target, this run, met, previous run. */
export function headlineTable(now: Headline[], before: Headline[] | undefined): string {
  const prev = new Map((before ?? []).map((h) => [h.label, h.value]));
  const cell = (v: number | undefined): string =>
    v === undefined || Number.isNaN(v) ? '-' : String(v);
  const lines = [
    '',
    "Targets (0 ms upstream unless said; ratios against this run's own floor)",
    `    ${'measure'.padEnd(46)}${'target'.padStart(10)}${'this run'.padStart(11)}${'met'.padStart(5)}${'previous'.padStart(11)}`,
  ];
  for (const h of now) {
    const target = `${h.bound === 'max' ? '<=' : '>='} ${h.target}`;
    lines.push(
      `    ${`${h.label}${h.unit ? ` (${h.unit})` : ''}`.padEnd(46)}${target.padStart(10)}${cell(h.value).padStart(11)}${(met(h) ? 'yes' : 'NO').padStart(5)}${cell(prev.get(h.label)).padStart(11)}`,
    );
  }
  return lines.join('\n');
}
