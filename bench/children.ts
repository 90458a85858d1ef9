/** The child processes of a run: build, fake upstream, gateway, and their logs. */
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { stringify as toYaml } from 'yaml';
import { JUDGE_MODEL, type ListeningMessage } from './fake-upstream';
import {
  API_KEY,
  CHUNK_COUNT,
  LOG_LEVEL,
  MESSAGES_MODEL,
  MODEL,
  RATE_LIMIT_ENV,
  READY_TIMEOUT_MS,
  RESPONSES_API_MODEL,
  RESPONSES_MODEL,
  ROOT,
  STOP_TIMEOUT_MS,
  UPSTREAM_KEY_ENV,
  type Variant,
  log,
} from './settings';

/** Newest modification time of any file under `dir`. */
export function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` when dist/main.js is missing or older than a file of src/. */
export function ensureBuilt(): void {
  const main = join(ROOT, 'dist', 'main.js');
  let builtAt = 0;
  try {
    builtAt = statSync(main).mtimeMs;
  } catch {
    // missing: build
  }
  if (builtAt > newestMtime(join(ROOT, 'src'))) {
    return;
  }
  log('building the gateway (npm run build) ...');
  // Build output goes to stderr so that stdout carries only the results.
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    throw new Error(`npm run build failed (exit ${result.status ?? result.signal})`);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when the child exits, or after `ms` with false. */
export function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL if the child has not exited in time. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  child.kill('SIGTERM');
  if (!(await waitExit(child, STOP_TIMEOUT_MS))) {
    child.kill('SIGKILL');
    await waitExit(child, STOP_TIMEOUT_MS);
  }
}

export interface UpstreamChild {
  child: ChildProcess;
  port: number;
}

/** Forks bench/fake-upstream.ts (through ts-node) and waits for its port. */
export function startUpstream(variant: Variant): Promise<UpstreamChild> {
  const child = fork(
    join(__dirname, 'fake-upstream.ts'),
    [
      `--latency-ms=${variant.latencyMs}`,
      `--chunk-interval-ms=${variant.chunkIntervalMs}`,
      `--chunk-count=${CHUNK_COUNT}`,
    ],
    { execArgv: ['-r', 'ts-node/register/transpile-only'], stdio: ['ignore', 2, 2, 'ipc'] },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the fake upstream did not start within 30 s'));
    }, READY_TIMEOUT_MS);
    child.once('message', (message: ListeningMessage) => {
      clearTimeout(timer);
      resolve({ child, port: message.port });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the fake upstream exited during startup (code ${code})`));
    });
  });
}

/**
 * Three providers, all pointing at the same fake upstream: an `openai-compatible` one for
 * chat (its model is also the target of /v1/messages translated to chat), a `kind: openai`
 * one (whose models /v1/responses passes through to `{base_url}/responses`; its
 * `upstream_api: responses` model has /v1/chat/completions translated to that) and a
 * `kind: anthropic` one (/v1/messages passed through to `{base_url}/v1/messages`,
 * /v1/chat/completions translated to it). The last two need a key, else their models are
 * hidden. JUDGE_MODEL, on the first, is the judge of the `chat+shadow` case. The chat
 * model has two deployments (a fourth provider, same upstream) and a fallback model, so the
 * resilience layer does its normal work on every request.
 */
export function writeCatalog(dir: string, upstreamPort: number): string {
  const path = join(dir, 'catalog.yaml');
  const origin = `http://127.0.0.1:${upstreamPort}`;
  const model = (id: string, provider: string, family: string): Record<string, unknown> => ({
    id,
    provider,
    family,
    context_window: 128_000,
    max_output_tokens: 16_384,
    pricing: { input: 1, output: 2 },
  });
  const catalog = {
    providers: [
      {
        name: 'bench-upstream',
        kind: 'openai-compatible',
        base_url: `${origin}/v1`,
        api_key_env: UPSTREAM_KEY_ENV,
      },
      {
        name: 'bench-openai',
        kind: 'openai',
        base_url: `${origin}/v1`,
        api_key_env: UPSTREAM_KEY_ENV,
      },
      {
        name: 'bench-anthropic',
        kind: 'anthropic',
        base_url: origin,
        api_key_env: UPSTREAM_KEY_ENV,
      },
      // The chat model's second deployment: the resilience layer picks between the two.
      {
        name: 'bench-upstream-b',
        kind: 'openai-compatible',
        base_url: `${origin}/v1`,
        api_key_env: UPSTREAM_KEY_ENV,
      },
    ],
    models: [
      {
        ...model(MODEL, 'bench-upstream', 'openai'),
        provider: undefined,
        deployments: [
          { provider: 'bench-upstream', upstream_id: MODEL, weight: 1 },
          { provider: 'bench-upstream-b', upstream_id: MODEL, weight: 1 },
        ],
        fallbacks: [RESPONSES_MODEL],
      },
      model(RESPONSES_MODEL, 'bench-openai', 'openai'),
      { ...model(RESPONSES_API_MODEL, 'bench-openai', 'openai'), upstream_api: 'responses' },
      model(MESSAGES_MODEL, 'bench-anthropic', 'anthropic'),
      // The shadow agent's judge (chat-completions-shaped, not streamed).
      model(JUDGE_MODEL, 'bench-upstream', 'openai'),
    ],
  };
  // JSON.stringify drops the undefined `provider` the deployments replace.
  writeFileSync(path, toYaml(JSON.parse(JSON.stringify(catalog))));
  return path;
}

/** What a run adds to the gateway child: node flags (`--cpu-prof`) and environment. */
export interface GatewayOptions {
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** How often readiness is polled; small when the cold start is being timed. */
  readyPollMs?: number;
  /** CPUs to pin the gateway to (`taskset -c <cpus>`, which execs node: same pid). */
  cpus?: string;
}

export interface GatewayChild {
  child: ChildProcess;
  port: number;
  logPath: string;
}

/**
 * Starts `node dist/main.js` with a minimal environment (nothing inherited but PATH, so a
 * developer's OPENAI_BASE_URL and the like cannot leak in). Its JSON log lines go to a
 * file, not to a pipe: draining a pipe would cost this process CPU during the run.
 */
export async function startGateway(
  dir: string,
  catalogPath: string,
  options: GatewayOptions = {},
): Promise<GatewayChild> {
  const port = await freePort();
  const logPath = join(dir, `gateway-${port}.log`);
  const logFd = openSync(logPath, 'a');
  // BENCH_GATEWAY_ROOT: another checkout's build (say, the commit before a change), run
  // against the same upstream and bench code for a before/after comparison.
  const root = process.env.BENCH_GATEWAY_ROOT ?? ROOT;
  const args = [...(options.nodeArgs ?? []), join(root, 'dist', 'main.js')];
  const [command, argv] =
    options.cpus === undefined
      ? [process.execPath, args]
      : ['taskset', ['-c', options.cpus, process.execPath, ...args]];
  const child = spawn(command, argv, {
    cwd: root,
    stdio: ['ignore', logFd, logFd],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      GATEWAY_API_KEYS: API_KEY,
      CATALOG_PATH: catalogPath,
      LOG_LEVEL,
      [UPSTREAM_KEY_ENV]: 'sk-bench-upstream',
      SHUTDOWN_TIMEOUT_MS: '3000',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      // Production refuses a per-process console secret; the bench signs nobody in.
      CONSOLE_SESSION_SECRET: 'bench-console-session-secret-0123456789',
      ...RATE_LIMIT_ENV,
      ...options.env,
    },
  });
  closeSync(logFd);
  try {
    await waitReady(child, port, options.readyPollMs);
  } catch (e) {
    await stopChild(child);
    throw new Error(`${(e as Error).message}\n${logTail(logPath)}`);
  }
  return { child, port, logPath };
}

export function logTail(logPath: string, lines = 15): string {
  const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  return `--- last lines of the gateway log (${logPath}) ---\n${tail}`;
}

/**
 * A failed request is often only the symptom of a gateway that crashed; when it did,
 * say so and show how it died, instead of a bare ECONNREFUSED.
 */
export async function explainFailure(e: unknown, gw: GatewayChild): Promise<Error> {
  const error = e instanceof Error ? e : new Error(String(e));
  // The exit event may trail the failed request by a moment.
  if (await waitExit(gw.child, 1000)) {
    const how = gw.child.signalCode ?? `code ${gw.child.exitCode}`;
    return new Error(
      `${error.message}\nthe gateway process exited (${how})\n${logTail(gw.logPath)}`,
    );
  }
  return error;
}

/** Polls GET /health/ready until it answers 200; fails if the child exits first. */
export async function waitReady(child: ChildProcess, port: number, pollMs = 100): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  const attempts = READY_TIMEOUT_MS / pollMs;
  try {
    for (let i = 0; i < attempts; i++) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`the gateway exited during startup (code ${child.exitCode})`);
      }
      try {
        const res = await pool.request({ path: '/health/ready', method: 'GET' });
        await res.body.dump();
        if (res.statusCode === 200) {
          return;
        }
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    throw new Error(`the gateway was not ready within ${READY_TIMEOUT_MS / 1000} s`);
  } finally {
    await pool.close();
  }
}

// Units of utime/stime in /proc/<pid>/stat; 100 on practically every Linux.
export const CLOCK_TICKS =
  Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** User+system CPU time of a process, in ms; undefined where /proc is not available. */
export function cpuTimeMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

export interface LogSummary {
  lines: number;
  byLevel: Record<string, number>;
  nonOkAccessLines: number;
  /**
   * The non-200 requests, counted by "<status> <path> <model> <stream|json> <outcome>
   * <errorCode>" (the fields the access-log line has).
   */
  nonOkRequests: Record<string, number>;
  /** Up to 10 distinct warn-or-worse messages. */
  problems: string[];
  /** The first non-200 access-log lines, as logged (latency and all), for diagnosis. */
  nonOkSamples: string[];
}

export const PINO_LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Reads the gateway's JSON log: counts per level, failed requests, warnings and errors. */
export function summarizeLog(path: string): LogSummary {
  const summary: LogSummary = {
    lines: 0,
    byLevel: {},
    nonOkAccessLines: 0,
    nonOkRequests: {},
    problems: [],
    nonOkSamples: [],
  };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') {
      continue;
    }
    summary.lines++;
    let entry: {
      level?: number;
      msg?: string;
      status?: number;
      path?: string;
      model?: string;
      stream?: boolean;
      outcome?: string;
      errorCode?: string;
      err?: { message?: string };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      entry = { level: 50, msg: `non-JSON output: ${line.slice(0, 200)}` };
    }
    const level = PINO_LEVELS[entry.level ?? 30] ?? String(entry.level);
    summary.byLevel[level] = (summary.byLevel[level] ?? 0) + 1;
    if (entry.msg === 'request' && entry.status !== 200) {
      summary.nonOkAccessLines++;
      // The model tells the cases that share a path apart (fast path or translated).
      const stream = entry.stream === undefined ? undefined : entry.stream ? 'stream' : 'json';
      const what = [entry.status, entry.path, entry.model, stream, entry.outcome, entry.errorCode];
      const key = what.filter(Boolean).join(' ');
      summary.nonOkRequests[key] = (summary.nonOkRequests[key] ?? 0) + 1;
      if (summary.nonOkSamples.length < 3) {
        summary.nonOkSamples.push(line.slice(0, 500));
      }
    }
    const text = `${level}: ${entry.msg ?? ''}${entry.err?.message ? ` (${entry.err.message})` : ''}`;
    if ((entry.level ?? 0) >= 40 && summary.problems.length < 10) {
      if (!summary.problems.includes(text)) {
        summary.problems.push(text);
      }
    }
  }
  return summary;
}
