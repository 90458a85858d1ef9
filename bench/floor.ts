/** Starts the bare proxy (bench/bare-proxy.ts), the floor of every comparison, as a child. */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { LATENCY_CASES } from './cases';
import { type Anomalies, type Target, interleave, timeCompletion } from './client';
import { type Comparison, compare } from './phases';
import { READY_TIMEOUT_MS, SCALE, type Variant } from './settings';

export interface BareChild {
  child: ChildProcess;
  port: number;
}

/**
 * Starts a floor process: `bare-proxy.ts` (node:http + undici, relaying to the upstream at
 * `upstreamPort`, accepting `key`) or `bare-nest.ts` (a Nest app answering by itself).
 */
export function startBare(
  upstreamPort: number,
  key: string,
  file: 'bare-proxy.ts' | 'bare-nest.ts' = 'bare-proxy.ts',
): Promise<BareChild> {
  const args = [`--upstream=http://127.0.0.1:${upstreamPort}`, `--key=${key}`];
  const child = fork(join(__dirname, file), args, {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not start within 30 s`));
    }, READY_TIMEOUT_MS);
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      resolve({ child, port: message.port });
    });
  });
}

/**
 * Added latency over direct, measured in the same rounds: the bare proxy's and the
 * gateway's, and the bare Nest app's (it answers by itself, as the fake upstream does,
 * so its figure is what Nest and express alone add to a plain node:http server).
 */
export interface FloorLatency {
  bare: Comparison;
  nest: Comparison;
  gateway: Comparison;
}

/**
 * Non-streamed chat at concurrency 1, direct, bare proxy, bare Nest and gateway interleaved
 * (A, B, C, D, A, B, ...), so that the floors and the gateway are measured under the same drift.
 */
export async function measureFloorLatency(
  v: Variant,
  t: { direct: Target; bare: Target; nest: Target; gateway: Target },
  anomalies: Anomalies,
): Promise<FloorLatency> {
  const chat = LATENCY_CASES[0];
  const legs = (check: boolean): (() => Promise<number>)[] =>
    [t.direct, t.bare, t.nest, t.gateway].map(
      (x) => () => timeCompletion(x, chat, anomalies, check && x !== t.nest),
    );
  await interleave(Math.ceil(v.latencyWarmupPairs * SCALE * 0.3), legs(true));
  const [d, b, n, g] = await interleave(Math.ceil(v.latencyPairs * SCALE * 0.5), legs(false));
  return { bare: compare(d, b), nest: compare(d, n), gateway: compare(d, g) };
}
