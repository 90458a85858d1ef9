/**
 * A fake upstream for the benchmark: a plain node:http server that answers, with fixed,
 * deterministic content, either as one JSON body or as an SSE stream:
 * - `POST /v1/chat/completions` (OpenAI Chat Completions, `data:` chunks and `[DONE]`);
 * - `POST /v1/responses` (OpenAI Responses: `event:` lines, `sequence_number`s);
 * - `POST /v1/messages` (Anthropic Messages: `event:` lines).
 * Every stream has the same pacing: `latencyMs` before the first byte, the opening events
 * at once, then `chunkCount` content events `chunkIntervalMs` apart, then the closing ones.
 * The streams carry usage where the gateway's translated paths read it: Anthropic
 * `message_start` (input tokens) and `message_delta` (output tokens), the chat usage chunk
 * when `stream_options.include_usage` is set (the gateway sets it on every chat upstream
 * call it translates to), and the Responses `response.completed` snapshot.
 *
 * A chat request for JUDGE_MODEL is a protection's judge call (the gateway's
 * `shadow_agent_validation`): its answer's text is JUDGE_VERDICT instead of the fixed words.
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

interface RequestSummary {
  model: string;
  stream: boolean;
  /** Chat only: `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Responses only: echoed in every response snapshot, as OpenAI does. */
  instructions: string | null;
  maxOutputTokens: number | null;
  promptChars: number;
}

/** The model run.ts's catalog names as the shadow agent's judge. */
export const JUDGE_MODEL = 'bench-judge';
/** What the judge always answers: let the answer through. */
export const JUDGE_VERDICT = '{"verdict":"allow","reason":"ok"}';

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
function summarize(text: string): RequestSummary {
  const body = JSON.parse(text) as {
    model?: unknown;
    stream?: unknown;
    stream_options?: { include_usage?: unknown } | null;
    instructions?: unknown;
    max_output_tokens?: unknown;
  };
  return {
    model: typeof body.model === 'string' ? body.model : 'unknown',
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    maxOutputTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    promptChars: text.length,
  };
}

function promptTokens(req: RequestSummary): number {
  return Math.ceil(req.promptChars * PROMPT_TOKENS_PER_CHAR);
}

function usage(req: RequestSummary, completionTokens: number): Record<string, unknown> {
  const prompt = promptTokens(req);
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

/** The text of a whole answer: the stream's words, or the judge's verdict. */
function answerText(req: RequestSummary, opts: FakeUpstreamOptions): string {
  return req.model === JUDGE_MODEL ? JUDGE_VERDICT : words(opts.chunkCount).join('');
}

function completion(req: RequestSummary, opts: FakeUpstreamOptions): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: req.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: answerText(req, opts), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usage(req, opts.chunkCount),
    system_fingerprint: 'fp_bench',
  });
}

/** One `chat.completion.chunk`; like OpenAI, `usage: null` on every chunk when asked for. */
function chunk(req: RequestSummary, choices: unknown[], usageValue?: unknown): string {
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

/** One stream's SSE frames, in the three groups that writePaced paces differently. */
interface Frames {
  opening: string[];
  content: string[];
  closing: string[];
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/**
 * Writes one stream with the pacing every format shares: the opening frames at once, the
 * content frames `chunkIntervalMs` apart, then the closing frames (the last one with the
 * end of the body). One write per frame, as a real server emits its events.
 */
async function writePaced(
  res: ServerResponse,
  frames: Frames,
  opts: FakeUpstreamOptions,
): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  for (const frame of frames.opening) {
    res.write(frame);
  }
  for (let i = 0; i < frames.content.length; i++) {
    if (res.destroyed) {
      return;
    }
    if (i > 0 && opts.chunkIntervalMs > 0) {
      await sleep(opts.chunkIntervalMs);
    }
    res.write(frames.content[i]);
  }
  const closing = frames.closing;
  for (let i = 0; i < closing.length - 1; i++) {
    res.write(closing[i]);
  }
  res.end(closing[closing.length - 1]);
}

// ---------------------------------------------------------------------------------------
// POST /v1/chat/completions
// ---------------------------------------------------------------------------------------

function chatStream(req: RequestSummary, opts: FakeUpstreamOptions): Frames {
  const closing = [chunk(req, delta({}, 'stop'))];
  if (req.includeUsage) {
    closing.push(chunk(req, [], usage(req, opts.chunkCount)));
  }
  closing.push('data: [DONE]\n\n');
  return {
    // OpenAI opens with an empty-content role chunk; clients must skip it for TTFT.
    opening: [chunk(req, delta({ role: 'assistant', content: '', refusal: null }))],
    content: words(opts.chunkCount).map((text) => chunk(req, delta({ content: text }))),
    closing,
  };
}

// ---------------------------------------------------------------------------------------
// POST /v1/responses (wire-formats.md sections 3.3 to 3.6)
// ---------------------------------------------------------------------------------------

const RESPONSE_ID = 'resp_bench';
const MESSAGE_ITEM_ID = 'msg_bench';

function responsesUsage(req: RequestSummary, outputTokens: number): Record<string, unknown> {
  const input = promptTokens(req);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + outputTokens,
  };
}

/** The `response` object, as a lifecycle snapshot or as the non-streamed answer. */
function responseObject(
  req: RequestSummary,
  status: 'in_progress' | 'completed',
  output: unknown[],
  usageValue: unknown,
): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    completed_at: status === 'completed' ? CREATED + 1 : null,
    error: null,
    incomplete_details: null,
    instructions: req.instructions,
    max_output_tokens: req.maxOutputTokens,
    model: req.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: false,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: usageValue,
    metadata: {},
  };
}

function outputText(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function messageItem(text: string | undefined): Record<string, unknown> {
  return {
    id: MESSAGE_ITEM_ID,
    type: 'message',
    status: text === undefined ? 'in_progress' : 'completed',
    content: text === undefined ? [] : [outputText(text)],
    role: 'assistant',
  };
}

function responsesCompleted(req: RequestSummary, opts: FakeUpstreamOptions): string {
  const text = words(opts.chunkCount).join('');
  const usageValue = responsesUsage(req, opts.chunkCount);
  return JSON.stringify(responseObject(req, 'completed', [messageItem(text)], usageValue));
}

function responsesStream(req: RequestSummary, opts: FakeUpstreamOptions): Frames {
  let sequence = 0;
  // Every event: `event:` line equal to its type, `sequence_number` 0, 1, 2, ...
  const event = (type: string, fields: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const at = { item_id: MESSAGE_ITEM_ID, output_index: 0, content_index: 0 };
  const parts = words(opts.chunkCount);
  const text = parts.join('');
  const shell = responseObject(req, 'in_progress', [], null);
  const opening = [
    event('response.created', { response: shell }),
    event('response.in_progress', { response: shell }),
    event('response.output_item.added', { output_index: 0, item: messageItem(undefined) }),
    event('response.content_part.added', { ...at, part: outputText('') }),
  ];
  const content = parts.map((part) =>
    event('response.output_text.delta', { ...at, delta: part, logprobs: [] }),
  );
  const closing = [
    event('response.output_text.done', { ...at, text, logprobs: [] }),
    event('response.content_part.done', { ...at, part: outputText(text) }),
    event('response.output_item.done', { output_index: 0, item: messageItem(text) }),
    event('response.completed', {
      response: responseObject(
        req,
        'completed',
        [messageItem(text)],
        responsesUsage(req, opts.chunkCount),
      ),
    }),
  ];
  return { opening, content, closing };
}

// ---------------------------------------------------------------------------------------
// POST /v1/messages (Anthropic, wire-formats.md sections 4.5 and 4.6)
// ---------------------------------------------------------------------------------------

function anthropicMessage(
  req: RequestSummary,
  content: unknown[],
  stopReason: string | null,
  outputTokens: number,
): Record<string, unknown> {
  return {
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: req.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: promptTokens(req),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: outputTokens,
      service_tier: 'standard',
    },
  };
}

function messagesCompleted(req: RequestSummary, opts: FakeUpstreamOptions): string {
  const text = words(opts.chunkCount).join('');
  return JSON.stringify(
    anthropicMessage(req, [{ type: 'text', text }], 'end_turn', opts.chunkCount),
  );
}

function messagesStream(req: RequestSummary, opts: FakeUpstreamOptions): Frames {
  // Every event: `event:` line equal to its type; `type` first in the JSON, as Anthropic does.
  const event = (type: string, fields: Record<string, unknown> = {}): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  return {
    opening: [
      event('message_start', { message: anthropicMessage(req, [], null, 1) }),
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ],
    content: words(opts.chunkCount).map((text) =>
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    ),
    closing: [
      event('content_block_stop', { index: 0 }),
      event('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: opts.chunkCount },
      }),
      event('message_stop'),
    ],
  };
}

// ---------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------

interface Route {
  /** The non-streamed answer's body. */
  json(req: RequestSummary, opts: FakeUpstreamOptions): string;
  /** The frames of the streamed answer. */
  stream(req: RequestSummary, opts: FakeUpstreamOptions): Frames;
}

const ROUTES: Record<string, Route> = {
  '/v1/chat/completions': { json: completion, stream: chatStream },
  '/v1/responses': { json: responsesCompleted, stream: responsesStream },
  '/v1/messages': { json: messagesCompleted, stream: messagesStream },
};

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: FakeUpstreamOptions,
): Promise<void> {
  const route = req.method === 'POST' ? ROUTES[req.url ?? ''] : undefined;
  if (route === undefined) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
    return;
  }
  let summary: RequestSummary;
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
    await writePaced(res, route.stream(summary, opts), opts);
    return;
  }
  const body = route.json(summary, opts);
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
