/**
 * The floor processes (bare-proxy.ts, nest-proxy.ts, bare-nest.ts) and the concurrency-1
 * rounds that measure them beside the gateway.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModuleKind, ScriptTarget, transpileModule } from 'typescript';
import { LATENCY_CASES } from './cases';
import { type Anomalies, type Target, interleave, timeCompletion } from './client';
import { type Comparison, compare } from './phases';
import { READY_TIMEOUT_MS, ROOT, SCALE, type Variant } from './settings';

export interface BareChild {
  child: ChildProcess;
  port: number;
}

/**
 * `bare-proxy.ts`: node:http + undici, relaying to the upstream; `nest-proxy.ts`: the Nest
 * floor proxy, the same on Nest and express; `bare-nest.ts`: a Nest app answering by itself.
 */
export type FloorFile = 'bare-proxy.ts' | 'nest-proxy.ts' | 'bare-nest.ts';

/**
 * The floor file transpiled to plain JavaScript in a temp folder: run through ts-node, the
 * child would hold the TypeScript compiler in memory (tens of MB), and its idle RSS would be
 * no floor for the gateway's, which runs compiled code.
 */
function compiled(file: FloorFile): string {
  const dir = join(tmpdir(), `gateway-bench-floor-${process.pid}`);
  const out = join(dir, file.replace(/\.ts$/, '.js'));
  const { outputText } = transpileModule(readFileSync(join(__dirname, file), 'utf8'), {
    compilerOptions: {
      module: ModuleKind.CommonJS,
      target: ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
    },
  });
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  writeFileSync(out, outputText);
  return out;
}

/** Starts a floor process relaying to the upstream at `upstreamPort` and accepting `key`. */
export function startBare(
  upstreamPort: number,
  key: string,
  file: FloorFile = 'bare-proxy.ts',
  execArgv: string[] = [],
): Promise<BareChild> {
  const args = [`--upstream=http://127.0.0.1:${upstreamPort}`, `--key=${key}`];
  const child = fork(compiled(file), args, {
    // The compiled file sits outside the checkout: resolve its packages from ours.
    env: { PATH: process.env.PATH ?? '', NODE_PATH: join(ROOT, 'node_modules') },
    execArgv,
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
 * Added latency over direct, measured in the same rounds: the bare proxy's, the Nest floor
 * proxy's, the gateway's (and its other variants', by label: another database, the key store
 * off), and the bare Nest app's (it answers by itself, as the fake upstream does, so its
 * figure is what Nest and express alone add to a plain node:http server).
 */
export interface FloorLatency {
  /** The main gateway's name in the report: its database. */
  gatewayLabel: string;
  bare: Comparison;
  nestProxy: Comparison;
  nest: Comparison;
  gateway: Comparison;
  others: Record<string, Comparison>;
}

export interface FloorTargets {
  direct: Target;
  bare: Target;
  nestProxy: Target;
  nest: Target;
  gateway: Target;
  /** Gateway variants measured in the same rounds (0 ms upstream only). */
  others: Target[];
}

/**
 * Non-streamed chat at concurrency 1, direct, bare proxy, Nest floor proxy, bare Nest,
 * gateway and its variants interleaved (A, B, C, ..., A, B, ...), so that the floors and the
 * gateways are measured under the same drift.
 */
export async function measureFloorLatency(
  v: Variant,
  t: FloorTargets,
  anomalies: Anomalies,
): Promise<FloorLatency> {
  const chat = LATENCY_CASES[0];
  const all = [t.direct, t.bare, t.nestProxy, t.nest, t.gateway, ...t.others];
  const legs = (check: boolean): (() => Promise<number>)[] =>
    all.map((x) => () => timeCompletion(x, chat, anomalies, check && x !== t.nest));
  await interleave(Math.ceil(v.latencyWarmupPairs * SCALE * 0.3), legs(true));
  const [d, b, p, n, g, ...o] = await interleave(
    Math.ceil(v.latencyPairs * SCALE * 0.5),
    legs(false),
  );
  return {
    gatewayLabel: t.gateway.label ?? 'gateway',
    bare: compare(d, b),
    nestProxy: compare(d, p),
    nest: compare(d, n),
    gateway: compare(d, g),
    others: Object.fromEntries(t.others.map((x, i) => [x.label ?? `#${i}`, compare(d, o[i])])),
  };
}
