/**
 * Gateway overhead benchmark (`npm run bench`). See bench/README.md for what is measured
 * and how to read the numbers.
 *
 * For each upstream variant (0 ms and 20 ms to first byte) it starts a fake upstream
 * (OpenAI Chat Completions, OpenAI Responses and Anthropic Messages) and the built gateway
 * (`node dist/main.js`) as child processes, then compares the same requests sent straight
 * to the upstream ("direct") with requests sent through the gateway, in the same run:
 *   1. non-streamed latency at concurrency 1, direct and gateway interleaved, for each
 *      entry of LATENCY_CASES (chat fast path, chat translated to Anthropic Messages);
 *   2. time to first content event and whole-stream time of streams, interleaved the same
 *      way, for each entry of STREAM_CASES (chat, responses, messages fast paths, then
 *      chat -> messages, messages -> chat and chat -> responses translated paths);
 *   3. chat throughput and latency under load (autocannon, fixed concurrency).
 * A translated case's direct call is the upstream's own API, in its own format. The cases
 * `chat+filter`, `chat+injection` and `chat+shadow` turn on one protection each (a
 * function tool in the request); each round sends the request without the tool to the
 * upstream, then to the gateway, then the request with it to the gateway: the last two
 * differ only by the protection, which is what it adds.
 * Before any child process starts, micro.ts times the protections' own code in process
 * (the injection detector per KB, the leak filter per streamed answer).
 * All traffic stays on 127.0.0.1. Every loop is bounded.
 */
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { stringify as toYaml } from 'yaml';
import { JUDGE_MODEL, type ListeningMessage } from './fake-upstream';
import { type MicroResult, microTable, runMicro } from './micro';
import { type Summary, round, summarize } from './stats';

// ---------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------

const ROOT = join(__dirname, '..');
const API_KEY = 'bench-key';
/** Chat model, on an `openai-compatible` provider (chat fast path). */
const MODEL = 'bench-model';
/** On a `kind: openai` provider: /v1/responses goes to its own `/responses` (fast path). */
const RESPONSES_MODEL = 'bench-gpt';
/**
 * On the `kind: openai` provider with `upstream_api: responses`: /v1/chat/completions is
 * translated to its `/responses`.
 */
const RESPONSES_API_MODEL = 'bench-gpt-pro';
/**
 * On a `kind: anthropic` provider: /v1/messages goes to its `/v1/messages` (fast path),
 * /v1/chat/completions is translated to it.
 */
const MESSAGES_MODEL = 'bench-claude';
const LOG_LEVEL = 'info';
const CHAT_PATH = '/v1/chat/completions';
const CHUNK_COUNT = 10;
/** The gateway's own key for the fake upstream (the fake upstream does not check it). */
const UPSTREAM_KEY_ENV = 'BENCH_UPSTREAM_API_KEY';

/**
 * BENCH_SCALE (0 < s <= 1) shrinks every count and duration, for a quick smoke run; the
 * default of 1 gives the published numbers in about 5m30s on 2 cores.
 */
const SCALE = readScale(process.env.BENCH_SCALE);

interface Variant {
  name: string;
  latencyMs: number;
  chunkIntervalMs: number;
  /** Interleaved non-streamed pairs of the chat case: warm-up, then measured. */
  latencyWarmupPairs: number;
  latencyPairs: number;
  /** The same for the other entries of LATENCY_CASES (`short` sampling). */
  shortLatencyPairs: PairCounts;
  /**
   * Interleaved streamed pairs (warm-up, then measured) per stream case: `full` for the
   * chat stream, `short` for the other entries of STREAM_CASES.
   */
  streamPairs: Record<Sampling, PairCounts>;
}

interface PairCounts {
  warmup: number;
  measured: number;
}

type Sampling = 'full' | 'short';

// The 20 ms variant gets fewer pairs: each pair costs two upstream delays, and the whole
// run must stay within about six minutes (the translated and protected cases use the `short`
// counts).
const VARIANTS: Variant[] = [
  {
    name: 'upstream 0 ms',
    latencyMs: 0,
    chunkIntervalMs: 0,
    latencyWarmupPairs: 1000,
    latencyPairs: 2000,
    shortLatencyPairs: { warmup: 300, measured: 1000 },
    streamPairs: {
      full: { warmup: 300, measured: 1000 },
      short: { warmup: 150, measured: 300 },
    },
  },
  {
    name: 'upstream 20 ms',
    latencyMs: 20,
    chunkIntervalMs: 1,
    latencyWarmupPairs: 100,
    latencyPairs: 1000,
    shortLatencyPairs: { warmup: 20, measured: 150 },
    streamPairs: {
      full: { warmup: 50, measured: 400 },
      short: { warmup: 20, measured: 120 },
    },
  },
];

const LOAD = { connections: 50, durationS: 10, warmupS: 2 };
/**
 * Short bursts before the sequential phases so that the gateway's hot paths are
 * JIT-compiled: `durationS` for the non-streamed and the streamed chat requests,
 * `extraStreamS` for every other case (most of their path is shared with chat).
 */
const BURST = { connections: 10, durationS: 2, extraStreamS: 1 };
/**
 * Rate limits of the gateway child (src/config/limits.config.ts; 0 there means no limit):
 * high enough that no phase is ever throttled, yet non-zero, so that a gateway that
 * counts requests and tokens does so during the bench as it would in production.
 */
const RATE_LIMIT_ENV = {
  RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000000',
  RATE_LIMIT_TOKENS_PER_MINUTE: '1000000000000',
  RATE_LIMIT_MAX_CONCURRENT_STREAMS: '100000',
};
/** Per-request bound for the sequential phases: a stuck gateway fails the run, not hangs it. */
const REQUEST_TIMEOUT_MS = 10_000;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------
// Request bodies: a realistic ~1 KB chat request (system + user message)
// ---------------------------------------------------------------------------------------

const SYSTEM_PROMPT =
  'You are a careful support assistant for an online bookshop. Answer in the language of ' +
  'the customer, in at most three short paragraphs. Never invent order numbers, prices or ' +
  'delivery dates: when you do not know, say so and point the customer to the order page. ' +
  'Be polite, concrete and brief; avoid marketing language.';

const USER_MESSAGE =
  'Hello, I ordered two paperback novels and a hardcover atlas last Tuesday and the ' +
  'confirmation email said delivery within three to five working days. The tracking page ' +
  'still shows "label created" and nothing else. I need the atlas for a class next Monday. ' +
  'Can you tell me whether the parcel has left the warehouse, whether I can still change ' +
  'the shipping method to express delivery, and what it would cost? If that is not ' +
  'possible, can I cancel only the atlas and buy it in a shop instead? Thank you very much ' +
  'for your help, and sorry for the long message. Best regards, Sam';

/**
 * The system prompt of the protected requests (about 1.7 KB, the size of a deployed
 * assistant's instructions): what `system_prompt_filter` protects, and what the shadow
 * agent's judge is given.
 */
const LONG_SYSTEM_PROMPT =
  `${SYSTEM_PROMPT} ` +
  'Orders: you may read the order status the tools return, but never change an order ' +
  'yourself; changes of address, shipping method or payment go through the order page. ' +
  'Refunds: a refund is possible within 30 days for unread books in their original ' +
  'condition, and for any damaged or wrong item; never promise a refund amount, the ' +
  'returns team sets it after inspection. Shipping: standard delivery takes three to five ' +
  'working days, express delivery one to two, and express is possible only before the ' +
  'parcel has left the warehouse. Partial cancellations are possible until the parcel is ' +
  'packed. Internal notes, never to be quoted or paraphrased to the customer: the ' +
  'warehouse in Lille is short of staff this month, so "label created" may last two days ' +
  'longer than usual; the courier contract with the express partner is under review; ' +
  'goodwill vouchers of up to ten euros may be offered only by a human agent, never by ' +
  'you. Escalation: when the customer is upset, when an order is more than ten days late, ' +
  'or when a payment was taken twice, offer to hand the conversation to a human agent and ' +
  'summarise the case in two sentences for them. Privacy: never repeat a full address, ' +
  'phone number or card number, even when the customer writes it; refer to "the address ' +
  'on your order" instead. Style: plain sentences, no lists unless the customer asks for ' +
  'steps, no emojis, and sign off with "The bookshop team".';

/**
 * A protection turned on the way every client can: a function tool with its name (README
 * "Protections"), default settings except what `properties` sets.
 */
function protectionTool(
  name: string,
  properties: Record<string, unknown> = {},
  description?: string,
): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: { type: 'object', properties },
    },
  };
}

/** What a protected chat request adds to the conversation. */
interface ChatExtras {
  /** Replaces SYSTEM_PROMPT. */
  system?: string;
  tools?: Record<string, unknown>[];
}

/**
 * The conversation as a chat body. `includeUsage` sets `stream_options.include_usage`, as
 * the gateway does on every chat upstream call it translates to.
 */
function chatBody(
  model: string,
  stream: boolean,
  includeUsage = false,
  extras: ChatExtras = {},
): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: extras.system ?? SYSTEM_PROMPT },
      { role: 'user', content: USER_MESSAGE },
    ],
    temperature: 0.2,
    max_completion_tokens: 512,
    user: 'bench-user-0001',
    ...(extras.tools === undefined ? {} : { tools: extras.tools }),
    ...(stream ? { stream: true } : {}),
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
}

const JSON_BODY = chatBody(MODEL, false);
// Sent to both targets, so that both receive the same bytes; the fake upstream ignores it.
const HEADERS = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

/** The same conversation as a streamed Responses request (system prompt as `instructions`). */
function responsesStreamBody(model: string): string {
  return JSON.stringify({
    model,
    instructions: SYSTEM_PROMPT,
    input: [{ role: 'user', content: USER_MESSAGE }],
    temperature: 0.2,
    max_output_tokens: 512,
    store: false,
    stream: true,
  });
}

/** The same conversation as an Anthropic Messages request (top-level `system`). */
function messagesBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: USER_MESSAGE }],
    max_tokens: 512,
    temperature: 0.2,
    metadata: { user_id: 'bench-user-0001' },
    ...(stream ? { stream: true } : {}),
  });
}

/** What the Anthropic SDK sends: its key as `x-api-key`, and `anthropic-version`. */
const ANTHROPIC_HEADERS = {
  'x-api-key': API_KEY,
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
};

// ---------------------------------------------------------------------------------------
// Stream cases: one entry per measured stream (see measureStreams)
// ---------------------------------------------------------------------------------------

/** One SSE event as a client decodes it (blank-line terminated). */
interface SseEvent {
  /** The `event:` line, when there was one. */
  event?: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
  /** `data` parsed; undefined for `[DONE]` and for data that is not a JSON object. */
  json?: Record<string, any>;
  /** `data` is neither `[DONE]` nor a JSON object (a broken relay would show up here). */
  malformed: boolean;
}

/** How one side of a stream case is requested and read. */
interface StreamRequest {
  path: string;
  body: string;
  headers: Record<string, string>;
  /** The event that stops the TTFT clock, for the row's title. */
  contentEventLabel: string;
  /** True for an event that carries content: the first one stops the TTFT clock. */
  isContentEvent(e: SseEvent): boolean;
  /** What is wrong with a whole stream (its events in order), or undefined. */
  check(events: SseEvent[]): string | undefined;
  /**
   * Protected requests: the verdicts the final `x-gateway-protections` must hold (the
   * trailer of a stream, else the header), e.g. `system_prompt_filter=pass`. A missing
   * one means the protection did not run, or did not pass: the row would not measure it.
   */
  protections?: string[];
}

interface StreamCase extends StreamRequest {
  /** Row label, and key of the case in the JSON results. */
  name: string;
  /**
   * The direct call, when it differs from the gateway call: a translated path's baseline
   * is the upstream's own API, in its own format. Unset: both send the same request.
   */
  direct?: StreamRequest;
  /**
   * A protected case: the same request without the protection tool, sent to the gateway
   * too, in the same rounds (direct, unprotected, protected, direct, ...), so that what the
   * protection adds is a paired difference of two gateway requests that differ only by it.
   */
  unprotected?: StreamRequest;
  /** Which of the variant's `streamPairs` counts to use. */
  sampling: Sampling;
  /** Length of the case's warm-up burst, in seconds. */
  burstS: number;
}

/**
 * A streamed chat request for `model`. By default without stream_options: the gateway
 * then asks the upstream for usage itself and strips the usage chunk on the way back, its
 * more expensive (and common) streaming path. `usageExpected`: the body asks for usage, as
 * the gateway's own chat upstream calls do, so the stream must end with the usage chunk.
 */
function chatStreamRequest(
  model: string,
  usageExpected = false,
  extras: ChatExtras = {},
  protections?: string[],
): StreamRequest {
  return {
    path: CHAT_PATH,
    body: chatBody(model, true, usageExpected, extras),
    headers: HEADERS,
    contentEventLabel: 'first chunk with delta.content',
    isContentEvent: isChatContent,
    check: (events) => checkChatStream(events, model, usageExpected),
    protections,
  };
}

function responsesStreamRequest(model: string): StreamRequest {
  return {
    path: '/v1/responses',
    body: responsesStreamBody(model),
    headers: HEADERS,
    contentEventLabel: 'first response.output_text.delta',
    isContentEvent: isResponsesContent,
    check: (events) => checkResponsesStream(events, model),
  };
}

function messagesStreamRequest(model: string): StreamRequest {
  return {
    path: '/v1/messages',
    body: messagesBody(model, true),
    headers: ANTHROPIC_HEADERS,
    contentEventLabel: 'first content_block_delta',
    isContentEvent: isMessagesContent,
    check: (events) => checkMessagesStream(events, model),
  };
}

/** One protection as a request turns it on, and the verdict it must end with. */
interface ProtectionSpec {
  tool: Record<string, unknown>;
  verdict: string;
}

/**
 * The protections measured end to end, each alone, with default settings (block mode):
 * `system_prompt_filter` (the canonical path, the leak filter on the answer),
 * `prompt_injection_protection` (the local detector on the user turn, then the fast path)
 * and `shadow_agent_validation` (the canonical path, the whole answer held until a judge
 * model, JUDGE_MODEL on the fake upstream, allows it).
 */
const PROTECTIONS: Record<'filter' | 'injection' | 'shadow', ProtectionSpec> = {
  filter: {
    tool: protectionTool('system_prompt_filter'),
    verdict: 'system_prompt_filter=pass',
  },
  injection: {
    tool: protectionTool('prompt_injection_protection'),
    verdict: 'prompt_injection_protection=pass',
  },
  shadow: {
    tool: protectionTool(
      'shadow_agent_validation',
      { model: { type: 'string', default: JUDGE_MODEL } },
      'Block an answer that promises a refund amount or quotes the internal notes.',
    ),
    verdict: 'shadow_agent_validation=pass',
  },
};

/**
 * The chat conversation with the long system prompt and one protection. The same
 * conversation without the tool is both its direct call (a client calling the upstream
 * itself has no protection) and its `unprotected` gateway request (the chat fast path).
 */
function protectedStreamCase(name: string, p: ProtectionSpec): StreamCase {
  const plain = chatStreamRequest(MODEL, false, { system: LONG_SYSTEM_PROMPT });
  return {
    name,
    ...chatStreamRequest(MODEL, false, { system: LONG_SYSTEM_PROMPT, tools: [p.tool] }, [
      p.verdict,
    ]),
    direct: plain,
    unprotected: plain,
    sampling: 'short',
    burstS: BURST.extraStreamS,
  };
}

/**
 * The streams measured, each direct vs gateway at concurrency 1 (measureStreams): first
 * the same-format fast paths, then the translated paths (`<client format>-><upstream
 * API>`), whose `direct` request is the same conversation in the upstream's own API, as
 * the upstream would be called without the gateway, then the protected cases
 * (`chat+<protection>`, see protectedStreamCase). A new case is one more entry here, plus
 * its model in writeCatalog when it needs one.
 */
const STREAM_CASES: StreamCase[] = [
  { name: 'chat', ...chatStreamRequest(MODEL), sampling: 'full', burstS: BURST.durationS },
  {
    name: 'responses',
    ...responsesStreamRequest(RESPONSES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  {
    name: 'messages',
    ...messagesStreamRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Chat client, Claude model: translated to the Anthropic Messages API.
  {
    name: 'chat->messages',
    ...chatStreamRequest(MESSAGES_MODEL),
    direct: messagesStreamRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Messages client, chat model: translated to Chat Completions, which the gateway always
  // asks for the usage chunk; the direct call asks for it too, to get the same stream.
  {
    name: 'messages->chat',
    ...messagesStreamRequest(MODEL),
    direct: chatStreamRequest(MODEL, true),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Chat client, `upstream_api: responses` model: translated to the Responses API.
  {
    name: 'chat->responses',
    ...chatStreamRequest(RESPONSES_API_MODEL),
    direct: responsesStreamRequest(RESPONSES_API_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Protections on the chat stream, each also sent without its tool, in the same rounds.
  protectedStreamCase('chat+filter', PROTECTIONS.filter),
  protectedStreamCase('chat+injection', PROTECTIONS.injection),
  protectedStreamCase('chat+shadow', PROTECTIONS.shadow),
];

// ---------------------------------------------------------------------------------------
// Latency cases: one entry per measured non-streamed request (see measureLatencies)
// ---------------------------------------------------------------------------------------

/** How one side of a non-streamed case is requested and checked. */
interface CompletionRequest {
  path: string;
  body: string;
  headers: Record<string, string>;
  /** What is wrong with the answer's body, or undefined. */
  check(text: string): string | undefined;
  /** As StreamRequest.protections (read from the header). */
  protections?: string[];
}

interface LatencyCase extends CompletionRequest {
  /** Row label, and key of the case in the JSON results. */
  name: string;
  /** As StreamCase.direct: the upstream's own API on a translated path. */
  direct?: CompletionRequest;
  /** As StreamCase.unprotected. */
  unprotected?: CompletionRequest;
  /** `full`: the variant's latencyWarmupPairs/latencyPairs; `short`: shortLatencyPairs. */
  sampling: Sampling;
  /** Length of the case's warm-up burst, in seconds. */
  burstS: number;
}

function chatCompletionRequest(
  model: string,
  extras: ChatExtras = {},
  protections?: string[],
): CompletionRequest {
  return {
    path: CHAT_PATH,
    body: chatBody(model, false, false, extras),
    headers: HEADERS,
    check: (text) => checkCompletion(text, model),
    protections,
  };
}

/** As protectedStreamCase, not streamed. */
function protectedLatencyCase(name: string, p: ProtectionSpec): LatencyCase {
  const plain = chatCompletionRequest(MODEL, { system: LONG_SYSTEM_PROMPT });
  return {
    name,
    ...chatCompletionRequest(MODEL, { system: LONG_SYSTEM_PROMPT, tools: [p.tool] }, [p.verdict]),
    direct: plain,
    unprotected: plain,
    sampling: 'short',
    burstS: BURST.extraStreamS,
  };
}

function messageRequest(model: string): CompletionRequest {
  return {
    path: '/v1/messages',
    body: messagesBody(model, false),
    headers: ANTHROPIC_HEADERS,
    check: (text) => checkMessage(text, model),
  };
}

const LATENCY_CASES: LatencyCase[] = [
  { name: 'chat', ...chatCompletionRequest(MODEL), sampling: 'full', burstS: BURST.durationS },
  // Chat client, Claude model: translated to the Anthropic Messages API.
  {
    name: 'chat->messages',
    ...chatCompletionRequest(MESSAGES_MODEL),
    direct: messageRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Protections on the non-streamed chat answer, likewise.
  protectedLatencyCase('chat+filter', PROTECTIONS.filter),
  protectedLatencyCase('chat+injection', PROTECTIONS.injection),
];

// ---------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------

function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// ---------------------------------------------------------------------------------------
// Child processes: build, fake upstream, gateway
// ---------------------------------------------------------------------------------------

/** Newest modification time of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    newest = Math.max(newest, statSync(join(dir, name)).mtimeMs);
  }
  return newest;
}

/** Runs `npx nest build` when dist/main.js is missing or older than a file of src/. */
function ensureBuilt(): void {
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
  log('building the gateway (npx nest build) ...');
  // Build output goes to stderr so that stdout carries only the results.
  const result = spawnSync('npx', ['nest', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    throw new Error(`npx nest build failed (exit ${result.status ?? result.signal})`);
  }
}

function freePort(): Promise<number> {
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
function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
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
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  child.kill('SIGTERM');
  if (!(await waitExit(child, STOP_TIMEOUT_MS))) {
    child.kill('SIGKILL');
    await waitExit(child, STOP_TIMEOUT_MS);
  }
}

interface UpstreamChild {
  child: ChildProcess;
  port: number;
}

/** Forks bench/fake-upstream.ts (through ts-node) and waits for its port. */
function startUpstream(variant: Variant): Promise<UpstreamChild> {
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
 * hidden. JUDGE_MODEL, on the first, is the judge of the `chat+shadow` case.
 */
function writeCatalog(dir: string, upstreamPort: number): string {
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
    ],
    models: [
      model(MODEL, 'bench-upstream', 'openai'),
      model(RESPONSES_MODEL, 'bench-openai', 'openai'),
      { ...model(RESPONSES_API_MODEL, 'bench-openai', 'openai'), upstream_api: 'responses' },
      model(MESSAGES_MODEL, 'bench-anthropic', 'anthropic'),
      // The shadow agent's judge (chat-completions-shaped, not streamed).
      model(JUDGE_MODEL, 'bench-upstream', 'openai'),
    ],
  };
  writeFileSync(path, toYaml(catalog));
  return path;
}

interface GatewayChild {
  child: ChildProcess;
  port: number;
  logPath: string;
}

/**
 * Starts `node dist/main.js` with a minimal environment (nothing inherited but PATH, so a
 * developer's OPENAI_BASE_URL and the like cannot leak in). Its JSON log lines go to a
 * file, not to a pipe: draining a pipe would cost this process CPU during the run.
 */
async function startGateway(dir: string, catalogPath: string): Promise<GatewayChild> {
  const port = await freePort();
  const logPath = join(dir, `gateway-${port}.log`);
  const logFd = openSync(logPath, 'a');
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
    cwd: ROOT,
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
      ...RATE_LIMIT_ENV,
    },
  });
  closeSync(logFd);
  try {
    await waitReady(child, port);
  } catch (e) {
    await stopChild(child);
    throw new Error(`${(e as Error).message}\n${logTail(logPath)}`);
  }
  return { child, port, logPath };
}

function logTail(logPath: string, lines = 15): string {
  const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  return `--- last lines of the gateway log (${logPath}) ---\n${tail}`;
}

/**
 * A failed request is often only the symptom of a gateway that crashed; when it did,
 * say so and show how it died, instead of a bare ECONNREFUSED.
 */
async function explainFailure(e: unknown, gw: GatewayChild): Promise<Error> {
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
async function waitReady(child: ChildProcess, port: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  const attempts = READY_TIMEOUT_MS / 100;
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
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the gateway was not ready within ${READY_TIMEOUT_MS / 1000} s`);
  } finally {
    await pool.close();
  }
}

// Units of utime/stime in /proc/<pid>/stat; 100 on practically every Linux.
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** User+system CPU time of a process, in ms; undefined where /proc is not available. */
function cpuTimeMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

interface LogSummary {
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

const PINO_LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Reads the gateway's JSON log: counts per level, failed requests, warnings and errors. */
function summarizeLog(path: string): LogSummary {
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

// ---------------------------------------------------------------------------------------
// Client: one keep-alive connection per target for the sequential phases
// ---------------------------------------------------------------------------------------

interface Target {
  name: 'direct' | 'gateway';
  origin: string;
  pool: Pool;
}

function target(name: Target['name'], port: number): Target {
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, {
    connections: 1,
    keepAliveTimeout: 120_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  return { name, origin, pool };
}

/** Anomalies seen in answers (wrong shape, missing [DONE], ...), counted by message. */
type Anomalies = Map<string, number>;

function note(anomalies: Anomalies, message: string | undefined): void {
  if (message !== undefined) {
    anomalies.set(message, (anomalies.get(message) ?? 0) + 1);
  }
}

function checkCompletion(text: string, model: string): string | undefined {
  try {
    const body = JSON.parse(text);
    if (body.model !== model || typeof body.choices?.[0]?.message?.content !== 'string') {
      return 'unexpected chat.completion shape';
    }
    if (typeof body.usage?.total_tokens !== 'number') {
      return 'chat.completion without usage';
    }
    return undefined;
  } catch {
    return 'non-JSON chat.completion';
  }
}

function checkMessage(text: string, model: string): string | undefined {
  try {
    const body = JSON.parse(text);
    if (body.type !== 'message' || body.model !== model || body.content?.[0]?.type !== 'text') {
      return 'unexpected message shape';
    }
    if (typeof body.usage?.output_tokens !== 'number') {
      return 'message without usage';
    }
    return undefined;
  } catch {
    return 'non-JSON message';
  }
}

/**
 * Which request of a case one leg of its rounds sends: `direct`, to the upstream; `gateway`,
 * the case's own request; `unprotected`, a protected case's request without the tool,
 * also to the gateway.
 */
type Leg = 'direct' | 'gateway' | 'unprotected';

function legRequest<R>(c: R & { direct?: R; unprotected?: R }, leg: Leg): R {
  const other = leg === 'direct' ? c.direct : leg === 'unprotected' ? c.unprotected : undefined;
  return other ?? c;
}

/** One non-streamed request: ms from send to the last byte of the body. */
async function timeCompletion(
  t: Target,
  c: LatencyCase,
  anomalies: Anomalies,
  check: boolean,
  leg: Leg = t.name,
): Promise<number> {
  const spec: CompletionRequest = legRequest<CompletionRequest>(c, leg);
  const start = process.hrtime.bigint();
  const res = await t.pool.request({
    path: spec.path,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
  });
  const text = await res.body.text();
  const ms = elapsedMs(start);
  if (res.statusCode !== 200) {
    throw new Error(`${leg} ${c.name} answered HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  }
  if (check) {
    const problem = spec.check(text) ?? checkProtections(spec.protections, res.headers);
    note(anomalies, problem === undefined ? undefined : `${leg} ${c.name}: ${problem}`);
  }
  return ms;
}

const PROTECTIONS_HEADER = 'x-gateway-protections';

/**
 * What is missing from the final verdicts of a protected request (the trailer of a stream,
 * which carries the outgoing protections' verdicts once the answer is done; else the
 * header), or undefined.
 */
function checkProtections(
  expected: string[] | undefined,
  headers: Record<string, string | string[] | undefined>,
  trailers: Record<string, string> = {},
): string | undefined {
  if (expected === undefined) {
    return undefined;
  }
  const raw = trailers[PROTECTIONS_HEADER] ?? headers[PROTECTIONS_HEADER];
  const value = Array.isArray(raw) ? raw.join(', ') : (raw ?? '');
  const missing = expected.filter((v) => !value.split(/,\s*/).some((p) => p.startsWith(v)));
  return missing.length === 0
    ? undefined
    : `${PROTECTIONS_HEADER} is '${value}', without ${missing.join(', ')}`;
}

interface StreamTiming {
  /** Request start to the end of the first event that carries content. */
  ttftMs: number;
  /** Request start to the end of the body. */
  totalMs: number;
}

/**
 * An SSE decoder as the SDKs implement it: `event:` and `data:` lines accumulate until a
 * blank line dispatches the event; comments (`: keepalive`) and other fields are ignored.
 */
class SseDecoder {
  private pending = '';
  private event: string | undefined;
  private data: string[] = [];

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  push(text: string): void {
    this.pending += text;
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      this.line(this.pending.slice(0, newline).replace(/\r$/, ''));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf('\n');
    }
  }

  /** End of the body: a last event without its blank line still counts. */
  end(): void {
    if (this.pending !== '') {
      this.line(this.pending);
      this.pending = '';
    }
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.onEvent(toSseEvent(this.event, this.data.join('\n')));
      }
      this.event = undefined;
      this.data = [];
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') {
      this.event = value;
    } else if (field === 'data') {
      this.data.push(value);
    }
  }
}

function toSseEvent(event: string | undefined, data: string): SseEvent {
  if (data === '[DONE]') {
    return { event, data, malformed: false };
  }
  try {
    const json: unknown = JSON.parse(data);
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
      return { event, data, json: json as SseEvent['json'], malformed: false };
    }
  } catch {
    // reported below
  }
  return { event, data, malformed: true };
}

/** The event's type: its `event:` line, else the JSON `type`. */
function eventType(e: SseEvent): string | undefined {
  const type: unknown = e.json?.type;
  return e.event ?? (typeof type === 'string' ? type : undefined);
}

function isChatContent(e: SseEvent): boolean {
  // The empty role chunk that opens the stream does not count.
  const content: unknown = e.json?.choices?.[0]?.delta?.content;
  return typeof content === 'string' && content !== '';
}

function isResponsesContent(e: SseEvent): boolean {
  return eventType(e) === 'response.output_text.delta';
}

function isMessagesContent(e: SseEvent): boolean {
  return eventType(e) === 'content_block_delta';
}

/** Checks shared by every format: JSON data, and `event:` lines that match the JSON type. */
function checkSseEvents(events: SseEvent[]): string | undefined {
  if (events.some((e) => e.malformed)) {
    return 'data: lines that are not JSON';
  }
  const mismatch = events.find((e) => e.event !== undefined && e.event !== e.json?.type);
  return mismatch ? `event: ${mismatch.event} with data of type ${mismatch.json?.type}` : undefined;
}

function checkChatStream(
  events: SseEvent[],
  model: string,
  usageExpected: boolean,
): string | undefined {
  const chunks = events.filter((e) => e.json !== undefined);
  if (chunks[0]?.json?.model !== model) {
    return `first chunk's model is ${chunks[0]?.json?.model}, not ${model}`;
  }
  const content = events.filter(isChatContent).length;
  if (content !== CHUNK_COUNT) {
    return `${content} content chunks instead of ${CHUNK_COUNT}`;
  }
  if (events[events.length - 1]?.data !== '[DONE]') {
    return 'stream without a final data: [DONE]';
  }
  const usage = chunks.filter((e) => Array.isArray(e.json?.choices) && e.json.choices.length === 0);
  if (!usageExpected) {
    // The client did not ask for usage, so no usage chunk may reach it.
    return usage.length > 0 ? 'usage chunk sent though not requested' : undefined;
  }
  const last = chunks[chunks.length - 1];
  return usage.length === 1 &&
    usage[0] === last &&
    typeof last.json?.usage?.total_tokens === 'number'
    ? undefined
    : 'no final usage chunk though requested';
}

/** wire-formats.md 3.4 to 3.6: named events, sequence numbers 0, 1, 2, ..., one terminal. */
function checkResponsesStream(events: SseEvent[], model: string): string | undefined {
  if (events.some((e) => e.event === undefined)) {
    return 'event without an event: line';
  }
  const gap = events.findIndex((e, i) => e.json?.sequence_number !== i);
  if (gap >= 0) {
    return `event ${gap} has sequence_number ${events[gap].json?.sequence_number}`;
  }
  const first = events[0];
  const last = events[events.length - 1];
  if (first?.event !== 'response.created' || first.json?.response?.model !== model) {
    return `stream opens with ${first?.event} (model ${first?.json?.response?.model}), not response.created (model ${model})`;
  }
  const deltas = events.filter(isResponsesContent).length;
  if (deltas !== CHUNK_COUNT) {
    return `${deltas} response.output_text.delta events instead of ${CHUNK_COUNT}`;
  }
  if (last?.event !== 'response.completed') {
    return `stream ends with ${last?.event}, not response.completed`;
  }
  if (typeof last.json?.response?.usage?.total_tokens !== 'number') {
    return 'response.completed without usage';
  }
  return last.json?.response?.model === model ? undefined : 'response.completed with another model';
}

/** wire-formats.md 4.6: message_start, the blocks, message_delta with usage, message_stop. */
function checkMessagesStream(events: SseEvent[], model: string): string | undefined {
  if (events.some((e) => e.event === undefined)) {
    return 'event without an event: line';
  }
  const first = events[0];
  if (first?.event !== 'message_start' || first.json?.message?.model !== model) {
    return `stream opens with ${first?.event} (model ${first?.json?.message?.model}), not message_start (model ${model})`;
  }
  const deltas = events.filter(
    (e) => isMessagesContent(e) && e.json?.delta?.type === 'text_delta',
  ).length;
  if (deltas !== CHUNK_COUNT) {
    return `${deltas} text_delta events instead of ${CHUNK_COUNT}`;
  }
  const messageDelta = events.find((e) => e.event === 'message_delta');
  if (typeof messageDelta?.json?.usage?.output_tokens !== 'number') {
    return 'no message_delta with usage';
  }
  const last = events[events.length - 1];
  return last?.event === 'message_stop' ? undefined : `stream ends with ${last?.event}`;
}

/** One streamed request, read to the end; the clock stops at the first content event. */
async function timeStream(
  t: Target,
  c: StreamCase,
  anomalies: Anomalies,
  leg: Leg = t.name,
): Promise<StreamTiming> {
  const spec: StreamRequest = legRequest<StreamRequest>(c, leg);
  const start = process.hrtime.bigint();
  const res = await t.pool.request({
    path: spec.path,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`${leg} ${c.name} stream: HTTP ${res.statusCode}: ${text.slice(0, 500)}`);
  }
  const events: SseEvent[] = [];
  let firstContentAt: bigint | undefined;
  const decoder = new SseDecoder((e) => {
    events.push(e);
    if (firstContentAt === undefined && spec.isContentEvent(e)) {
      firstContentAt = process.hrtime.bigint();
    }
  });
  res.body.setEncoding('utf8');
  for await (const piece of res.body) {
    decoder.push(piece as string);
  }
  decoder.end();
  const totalMs = elapsedMs(start);
  const problem =
    checkSseEvents(events) ??
    spec.check(events) ??
    checkProtections(spec.protections, res.headers, res.trailers);
  note(anomalies, problem === undefined ? undefined : `${leg} ${c.name} stream: ${problem}`);
  const ttftMs = firstContentAt === undefined ? NaN : Number(firstContentAt - start) / 1e6;
  return { ttftMs, totalMs };
}

/**
 * Runs `count` rounds of the legs in order (A, B, A, B, ... or A, B, C, A, B, C, ...),
 * strictly one request at a time; returns each leg's samples.
 */
async function interleave<T>(count: number, legs: (() => Promise<T>)[]): Promise<T[][]> {
  const out = legs.map((): T[] => []);
  for (let i = 0; i < count; i++) {
    for (const [j, leg] of legs.entries()) {
      out[j].push(await leg());
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------

interface Comparison {
  direct: Summary;
  gateway: Summary;
  /** Gateway minus direct, percentile by percentile. */
  added: { p50: number; p90: number; p99: number; mean: number };
  /** Percentiles of the per-pair differences (gateway minus direct of the same pair). */
  pairedDelta: Summary;
}

function compare(direct: number[], gateway: number[]): Comparison {
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

interface LatencyComparison {
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
interface ProtectionComparison {
  unprotected: Summary;
  added: Summary;
}

function protectionComparison(unprotected: number[], protectedMs: number[]): ProtectionComparison {
  return {
    unprotected: summarize(unprotected),
    added: summarize(protectedMs.map((v, i) => v - unprotected[i])),
  };
}

/** The legs of a case's rounds: direct then gateway, with `unprotected` between them if set. */
function legsOf(c: { unprotected?: unknown }): Leg[] {
  return c.unprotected === undefined ? ['direct', 'gateway'] : ['direct', 'unprotected', 'gateway'];
}

function latencyCounts(v: Variant, sampling: Sampling): PairCounts {
  return sampling === 'full'
    ? { warmup: v.latencyWarmupPairs, measured: v.latencyPairs }
    : v.shortLatencyPairs;
}

/** One latency case: warm-up rounds (answers checked), then measured rounds, interleaved. */
async function measureLatency(
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
async function measureLatencies(
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

interface StreamComparison {
  /** The STREAM_CASES entry. */
  name: string;
  path: string;
  ttft: Comparison;
  total: Comparison;
  /** A protected case: see ProtectionComparison. */
  protection?: { ttft: ProtectionComparison; total: ProtectionComparison };
}

/** One stream case: warm-up rounds, then measured rounds, direct and gateway interleaved. */
async function measureStream(
  v: Variant,
  c: StreamCase,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
): Promise<StreamComparison> {
  const counts = v.streamPairs[c.sampling];
  const legs = legsOf(c).map(
    (leg) => () => timeStream(leg === 'direct' ? direct : gateway, c, anomalies, leg),
  );
  await interleave(Math.ceil(counts.warmup * SCALE), legs);
  const samples = await interleave(Math.ceil(counts.measured * SCALE), legs);
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
  };
}

/** Every entry of STREAM_CASES, one after the other. */
async function measureStreams(
  v: Variant,
  direct: Target,
  gateway: Target,
  anomalies: Anomalies,
): Promise<StreamComparison[]> {
  const out: StreamComparison[] = [];
  for (const c of STREAM_CASES) {
    log(`[${v.name}] ${c.name} stream, time to first content, concurrency 1 ...`);
    out.push(await measureStream(v, c, direct, gateway, anomalies));
  }
  return out;
}

/** What autocannon sends: one fixed request, over and over. */
interface CannonRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

const CHAT_REQUEST: CannonRequest = { path: CHAT_PATH, headers: HEADERS, body: JSON_BODY };

function cannon(
  t: Target,
  request: CannonRequest,
  connections: number,
  durationS: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: t.origin + request.path,
    method: 'POST',
    headers: request.headers,
    body: request.body,
    connections,
    duration: Math.max(1, Math.round(durationS * SCALE)),
  });
}

/**
 * Short concurrent bursts of every request kind (each latency case, then each stream case,
 * with the request it sends to this target), to JIT-compile the hot paths first.
 */
async function burst(t: Target): Promise<void> {
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

interface LoadResult {
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
function cpuPerRequest(
  before: number | undefined,
  after: number | undefined,
  requests: number,
): number | undefined {
  if (before === undefined || after === undefined || requests === 0) {
    return undefined;
  }
  return round(((after - before) * 1000) / requests, 1);
}

async function measureLoad(
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

// ---------------------------------------------------------------------------------------
// One variant, end to end
// ---------------------------------------------------------------------------------------

interface VariantResult {
  variant: Variant;
  /** One entry per LATENCY_CASES entry, in order. */
  latencies: LatencyComparison[];
  /** One entry per STREAM_CASES entry, in order. */
  streams: StreamComparison[];
  load: { direct: LoadResult; gateway: LoadResult };
  anomalies: Record<string, number>;
  gatewayLog: LogSummary;
}

async function measurePhases(
  v: Variant,
  direct: Target,
  gateway: Target,
  pids: { upstream?: number; gateway?: number },
): Promise<Omit<VariantResult, 'gatewayLog'>> {
  const anomalies: Anomalies = new Map();
  log(`[${v.name}] warm-up bursts ...`);
  await burst(direct);
  await burst(gateway);
  const latencies = await measureLatencies(v, direct, gateway, anomalies);
  const streams = await measureStreams(v, direct, gateway, anomalies);
  log(`[${v.name}] throughput, ${LOAD.connections} connections ...`);
  const load = {
    direct: await measureLoad(direct, { upstream: pids.upstream }, anomalies),
    gateway: await measureLoad(gateway, pids, anomalies),
  };
  return { variant: v, latencies, streams, load, anomalies: Object.fromEntries(anomalies) };
}

async function runVariant(v: Variant, dir: string): Promise<VariantResult> {
  log(`[${v.name}] starting the fake upstream and the gateway ...`);
  const upstream = await startUpstream(v);
  const stopUpstream = onCleanup(() => stopChild(upstream.child));
  const gw = await startGateway(dir, writeCatalog(dir, upstream.port));
  const stopGateway = onCleanup(() => stopChild(gw.child));
  const direct = target('direct', upstream.port);
  const gateway = target('gateway', gw.port);
  let measured: Omit<VariantResult, 'gatewayLog'>;
  try {
    measured = await measurePhases(v, direct, gateway, {
      upstream: upstream.child.pid,
      gateway: gw.child.pid,
    });
  } catch (e) {
    throw await explainFailure(e, gw);
  } finally {
    await direct.pool.close();
    await gateway.pool.close();
    await stopGateway();
    await stopUpstream();
  }
  // Read only now: the log is complete once the gateway has exited.
  const gatewayLog = summarizeLog(gw.logPath);
  rmSync(gw.logPath);
  return { ...measured, gatewayLog };
}

// ---------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function fmt(value: number | undefined, digits = 3): string {
  return value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
}

function signed(value: number, digits = 3): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

function row(label: string, direct = '', gateway = '', added = ''): string {
  return `    ${label.padEnd(32)}${direct.padStart(12)}${gateway.padStart(12)}${added.padStart(14)}`;
}

function comparisonRows(label: string, c: Comparison): string[] {
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
function paths(c: { path: string; direct?: { path: string } } | undefined, path: string): string {
  const directPath = c?.direct?.path;
  return directPath === undefined || directPath === path ? path : `${path} (direct: ${directPath})`;
}

/**
 * A protected case's lines: the gateway without the tool against the same direct samples,
 * then what the tool adds (per-round differences), for each measure.
 */
function protectionRows(measures: [string, Summary, ProtectionComparison][]): string[] {
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
function counted(count: number, protectedCase: boolean): string {
  return protectedCase
    ? `n=${count} rounds: direct, gateway without the tool, with it`
    : `n=${count} pairs`;
}

function latencyRows(l: LatencyComparison): string[] {
  const c = LATENCY_CASES.find((x) => x.name === l.name);
  return [
    `  Non-stream ${l.name} ${paths(c, l.path)}, concurrency 1 (${counted(l.latency.direct.count, l.protection !== undefined)})`,
    ...comparisonRows('latency', l.latency),
    ...(l.protection === undefined
      ? []
      : protectionRows([['latency', l.latency.direct, l.protection]])),
  ];
}

function streamRows(s: StreamComparison): string[] {
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
    ...(s.protection === undefined
      ? []
      : protectionRows([
          ['TTFT', s.ttft.direct, s.protection.ttft],
          ['whole', s.total.direct, s.protection.total],
        ])),
  ];
}

function loadRows(load: VariantResult['load']): string[] {
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

function problemLines(r: VariantResult): string[] {
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

function variantTable(r: VariantResult): string {
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
    ...problemLines(r),
  ].join('\n');
}

interface Environment {
  node: string;
  cpus: number;
  cpuModel: string;
  platform: string;
  logLevel: string;
  gitCommit?: string;
  gitDirty?: boolean;
  scale: number;
}

function environment(): Environment {
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

function printReport(env: Environment, micro: MicroResult, results: VariantResult[]): void {
  const head = [
    'Reasoning Inference Gateway - overhead benchmark',
    `node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), ${env.platform}`,
    `gateway: node dist/main.js, NODE_ENV=production, LOG_LEVEL=${env.logLevel} (one access-log line per request, to a file)`,
    `commit ${env.gitCommit ?? '?'}${env.gitDirty ? ' + uncommitted changes in src/' : ''}; all processes share the same ${env.cpus} CPUs`,
  ];
  if (env.scale !== 1) {
    head.push(`BENCH_SCALE=${env.scale}: reduced counts, not for publication`);
  }
  process.stdout.write(
    `${head.join('\n')}\n${microTable(micro)}\n${results.map(variantTable).join('\n')}\n`,
  );
}

function writeResults(env: Environment, micro: MicroResult, results: VariantResult[]): string {
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
    `${JSON.stringify({ environment: env, settings, micro, results }, null, 2)}\n`,
  );
  return path;
}

// ---------------------------------------------------------------------------------------
// Main, with cleanup on every exit path
// ---------------------------------------------------------------------------------------

const cleanups: (() => Promise<void>)[] = [];

/** Registers a cleanup step; the returned function runs it early. Each step runs at most once. */
function onCleanup(step: () => Promise<void>): () => Promise<void> {
  let done = false;
  const once = async (): Promise<void> => {
    if (!done) {
      done = true;
      await step();
    }
  };
  cleanups.push(once);
  return once;
}

async function cleanUp(): Promise<void> {
  for (const step of cleanups.reverse()) {
    await step().catch(() => undefined);
  }
}

function readScale(raw: string | undefined): number {
  const value = raw === undefined || raw === '' ? 1 : Number(raw);
  if (!(value > 0 && value <= 1)) {
    throw new Error(`BENCH_SCALE must be a number in (0, 1], not ${raw}`);
  }
  return value;
}

async function main(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  log(`temporary catalog and gateway logs in ${dir} (kept if the run fails)`);
  const env = environment();
  // In process, before any child process competes for the CPU.
  const micro = runMicro(SCALE, log);
  const results: VariantResult[] = [];
  for (const variant of VARIANTS) {
    results.push(await runVariant(variant, dir));
  }
  rmSync(dir, { recursive: true, force: true });
  printReport(env, micro, results);
  log(`\nresults written to ${writeResults(env, micro, results)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the child processes ...`);
    void cleanUp().then(() => process.exit(130));
  });
}

main()
  .then(async () => {
    await cleanUp();
    process.exit(0);
  })
  .catch(async (e: unknown) => {
    log(`\nbenchmark FAILED: ${e instanceof Error ? e.message : String(e)}`);
    await cleanUp();
    process.exit(1);
  });
