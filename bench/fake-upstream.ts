/**
 * A fake OpenAI-compatible upstream for the benchmark: a plain node:http server that
 * answers `POST /v1/chat/completions` with a fixed, deterministic completion, either as
 * one JSON body or as an SSE stream.
 *
 * It can be imported (`startFakeUpstream`) or run as a child process (see the bottom of
 * this file). run.ts uses the child form so that the upstream has its own event loop:
 * otherwise its work would share a thread with the load generator and distort both the
 * client-side timings and the throughput comparison.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUpstreamOptions {
  /** Delay before the first byte of every answer (headers included). */
  latencyMs: number;
  /** Delay between two content chunks of a stream; 0 writes them back to back. */
  chunkIntervalMs: number;
  /** Number of content chunks in a stream (the non-streamed answer has the same text). */
  chunkCount: number;
}

export interface FakeUpstream {
  port: number;
  /** Base URL as a catalog `base_url` wants it (ends with /v1). */
  baseUrl: string;
  close(): Promise<void>;
}

/** Message sent to the parent over IPC once the child listens. */
export interface ListeningMessage {
  type: 'listening';
  port: number;
}

interface ChatRequestSummary {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  promptChars: number;
}

const PROMPT_TOKENS_PER_CHAR = 0.25;
const CREATED = 1_767_225_600; // fixed, so that every answer has the same size

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function words(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `token${i} `);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Pulls out the few fields the answer depends on; throws on a body that is not JSON. */
function summarize(text: string): ChatRequestSummary {
  const body = JSON.parse(text) as {
    model?: unknown;
    stream?: unknown;
    stream_options?: { include_usage?: unknown } | null;
  };
  return {
    model: typeof body.model === 'string' ? body.model : 'unknown',
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    promptChars: text.length,
  };
}

function usage(req: ChatRequestSummary, completionTokens: number): Record<string, unknown> {
  const promptTokens = Math.ceil(req.promptChars * PROMPT_TOKENS_PER_CHAR);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

function completion(req: ChatRequestSummary, opts: FakeUpstreamOptions): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: req.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: words(opts.chunkCount).join(''), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usage(req, opts.chunkCount),
    system_fingerprint: 'fp_bench',
  });
}

/** One `chat.completion.chunk`; like OpenAI, `usage: null` on every chunk when asked for. */
function chunk(req: ChatRequestSummary, choices: unknown[], usageValue?: unknown): string {
  const body: Record<string, unknown> = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: req.model,
    system_fingerprint: 'fp_bench',
    choices,
  };
  if (req.includeUsage) {
    body.usage = usageValue ?? null;
  }
  return `data: ${JSON.stringify(body)}\n\n`;
}

function delta(content: Record<string, unknown>, finish: string | null = null): unknown[] {
  return [{ index: 0, delta: content, logprobs: null, finish_reason: finish }];
}

async function writeStream(
  req: ChatRequestSummary,
  res: ServerResponse,
  opts: FakeUpstreamOptions,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // OpenAI opens with an empty-content role chunk; clients must skip it for TTFT.
  res.write(chunk(req, delta({ role: 'assistant', content: '', refusal: null })));
  const text = words(opts.chunkCount);
  for (let i = 0; i < text.length; i++) {
    if (res.destroyed) {
      return;
    }
    if (i > 0 && opts.chunkIntervalMs > 0) {
      await sleep(opts.chunkIntervalMs);
    }
    res.write(chunk(req, delta({ content: text[i] })));
  }
  res.write(chunk(req, delta({}, 'stop')));
  if (req.includeUsage) {
    res.write(chunk(req, [], usage(req, opts.chunkCount)));
  }
  res.end('data: [DONE]\n\n');
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: FakeUpstreamOptions,
): Promise<void> {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
    return;
  }
  let summary: ChatRequestSummary;
  try {
    summary = summarize(await readBody(req));
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'bad JSON', type: 'invalid_request_error' } }));
    return;
  }
  if (opts.latencyMs > 0) {
    await sleep(opts.latencyMs);
  }
  if (summary.stream) {
    await writeStream(summary, res, opts);
    return;
  }
  const body = completion(summary, opts);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Starts the fake upstream on 127.0.0.1, on a free port. */
export async function startFakeUpstream(opts: FakeUpstreamOptions): Promise<FakeUpstream> {
  const server: Server = createServer((req, res) => {
    handle(req, res, opts).catch(() => res.destroy());
  });
  // Longer than any pause of the benchmark, so pooled connections are never recycled mid-run.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads `--name=<non-negative integer>` from argv, or the default. */
function intArg(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`--${name} must be a non-negative integer`);
  }
  return value;
}

/** Child-process entry: listen, tell the parent the port, exit when the parent goes. */
async function runAsChild(): Promise<void> {
  const upstream = await startFakeUpstream({
    latencyMs: intArg('latency-ms', 0),
    chunkIntervalMs: intArg('chunk-interval-ms', 0),
    chunkCount: intArg('chunk-count', 10),
  });
  const message: ListeningMessage = { type: 'listening', port: upstream.port };
  process.send?.(message);
  const stop = (): void => {
    void upstream.close().then(() => process.exit(0));
  };
  // A parent that dies without cleaning up must not leave an orphan server behind.
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
}

if (require.main === module) {
  runAsChild().catch((e: unknown) => {
    console.error(`fake upstream failed: ${String(e)}`);
    process.exit(1);
  });
}
