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

/** Added latency of the bare proxy and of the gateway over direct, measured in the same rounds. */
export interface FloorLatency {
  bare: Comparison;
  gateway: Comparison;
}

/**
 * Non-streamed chat at concurrency 1, direct, bare proxy and gateway interleaved (A, B, C,
 * A, B, C, ...), so that the floor and the gateway are measured under the same drift.
 */
export async function measureFloorLatency(
  v: Variant,
  direct: Target,
  bare: Target,
  gateway: Target,
  anomalies: Anomalies,
): Promise<FloorLatency> {
  const chat = LATENCY_CASES[0];
  const legs = (check: boolean): (() => Promise<number>)[] =>
    [direct, bare, gateway].map((t) => () => timeCompletion(t, chat, anomalies, check));
  await interleave(Math.ceil(v.latencyWarmupPairs * SCALE * 0.3), legs(true));
  const [d, b, g] = await interleave(Math.ceil(v.latencyPairs * SCALE * 0.5), legs(false));
  return { bare: compare(d, b), gateway: compare(d, g) };
}
