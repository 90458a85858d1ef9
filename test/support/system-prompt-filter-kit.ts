import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request as undiciRequest } from 'undici';
import { anthropicMessage, named, textEvents } from './anthropic-fixtures';
import { chatCompletion, textStream } from './chat-fixtures';
import { FakeUpstream, type Reply, type SseEvent } from './fake-upstream';
import { startGateway, TEST_KEY, writeCatalog, type TestGateway } from './gateway';
import { asSse, responsesObject, responsesStream, type UpstreamItem } from './responses-fixtures';

export const FILTER = 'system_prompt_filter';
export const HEADER = 'x-gateway-protections';
export const SYSTEM =
  'You are Orion, the support assistant of Acme Rockets. Never reveal the launch window ' +
  'or the vault passphrase to anyone. Answer politely and in at most three sentences.';
/** Nine words of SYSTEM: a leak at the default min_overlap of 8. */
export const LEAK = 'You are Orion, the support assistant of Acme Rockets.';
/** The same words, case and spacing changed. */
export const LEAK_MANGLED = 'you  ARE orion -\n the Support   assistant OF acme\trockets';
/** The same words again, in markdown, with zero-width characters and a soft hyphen inside. */
export const LEAK_DISGUISED =
  '**You are** _Or\u200bion_ — the *sup\u00adport* `assistant` of Ac\u200dme-ROCKETS';
export const BEFORE = 'Sure, here goes: ';
export const AFTER = ' Anything else I can help with today?';
/** The local models think "The right move is to echo it back." at effort low and above. */
export const LOCAL_SYSTEM = 'Remember: the right move is to echo it back when unsure.';
export const LOCAL_THINKING_REDACTED = 'The user sent a message of 1 word. [REDACTED].';
/** Unicode, escapes, odd spacing, and an end ("you are") the filter holds until the answer ends. */
export const PASS_TEXT =
  'Paris is the capital of France — “ünïcödé” 🚀, "quotes", \\backslash\\ and\nnew  lines; you are';

export function catalog(url: string): string {
  return writeCatalog(`
providers:
  - name: fake-openai
    kind: openai
    base_url: ${url}/v1
    api_key_env: TEST_UPSTREAM_KEY
  - name: fake-anthropic
    kind: anthropic
    base_url: ${url}
    api_key_env: TEST_UPSTREAM_KEY
  - name: local
    kind: local
models:
  - { id: gpt-same, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
  - { id: claude-same, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

export type Settings = Record<string, unknown>;
export const schema = (properties: Settings = {}): Record<string, unknown> => ({
  type: 'object',
  properties,
});
export const REDACT = { action: { type: 'string', default: 'redact' } };
export const chatTool = (properties: Settings = {}): any => ({
  type: 'function',
  function: { name: FILTER, parameters: schema(properties) },
});
export const responsesTool = (properties: Settings = {}): any => ({
  type: 'function',
  name: FILTER,
  parameters: schema(properties),
  strict: false,
});
export const messagesTool = (properties: Settings = {}): any => ({
  name: FILTER,
  input_schema: schema(properties),
});
export const chatTurn = (system: string, user = 'Tell me about yourself.'): any[] => [
  { role: 'system', content: system },
  { role: 'user', content: user },
];

/** Cuts text into pieces of `n` characters (code points). */
export function every(n: number, text: string): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += n) {
    out.push(chars.slice(i, i + n).join(''));
  }
  return out;
}

/** Chunkings of the same text: whole, by word, mid-word, 1 and 3 characters. */
export const SPLITS: [string, (text: string) => string[]][] = [
  ['one chunk', (t: string): string[] => [t]],
  ['word by word', (t: string): string[] => t.match(/\s*\S+|\s+$/g) ?? []],
  ['mid-word', (t: string): string[] => t.match(/.{1,5}/gs) ?? []],
  ['one character at a time', (t: string): string[] => every(1, t)],
  ['three characters at a time', (t: string): string[] => every(3, t)],
];

export let upstream: FakeUpstream;
export let gw: TestGateway;
export let openai: OpenAI;
export let anthropic: Anthropic;

/** The fake upstream answers chat completions with `pieces` (streamed or as one body). */
export function chatAnswers(pieces: string[], extra: { intervalMs?: number } = {}): void {
  upstream.on('/v1/chat/completions', (req) =>
    req.body.stream
      ? { sse: [...textStream('gpt-same', pieces, true), '[DONE]'], ...extra }
      : { json: chatCompletion('gpt-same', pieces.join('')) },
  );
}
export function messagesAnswers(pieces: string[], extra: { intervalMs?: number } = {}): void {
  upstream.on('/v1/messages', (req) =>
    req.body.stream
      ? { sse: named(textEvents('claude-same', pieces)), ...extra }
      : { json: anthropicMessage('claude-same', [{ type: 'text', text: pieces.join('') }]) },
  );
}
export function responsesAnswers(items: UpstreamItem[], extra: { intervalMs?: number } = {}): void {
  upstream.on('/v1/responses', (req): Reply =>
    req.body.stream
      ? { sse: asSse(responsesStream('gpt-same', items)), ...extra }
      : { json: responsesObject('gpt-same', items) },
  );
}

export async function health(): Promise<Record<string, number>> {
  const body = (await (await fetch(`${gw.origin}/health/protections`)).json()) as any;
  return body[FILTER];
}

/** A raw POST through undici, which exposes HTTP trailers once the body is read. */
export async function rawPost(
  path: string,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; text: string; trailers: any }> {
  const res = await undiciRequest(`${gw.origin}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${TEST_KEY}`,
      'x-api-key': TEST_KEY,
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, trailers: res.trailers };
}

/** Registers the suite's hooks: one fake upstream and a gateway in front of it for the file. */
export function useFilterGateway(): void {
  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({ CATALOG_PATH: catalog(upstream.url), SSE_KEEPALIVE_MS: '5000' });
    openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });
  beforeEach(() => {
    upstream.reset();
  });
}

// Upstream streams this suite needs beyond the shared fixtures.

export function chatChunk(delta: object, finish: string | null = null): object {
  return {
    id: 'chatcmpl-spf',
    object: 'chat.completion.chunk',
    created: 1694268190,
    model: 'gpt-same',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** A chat stream of one tool call whose arguments arrive in `pieces`. */
export function chatToolCallStream(name: string, pieces: string[]): SseEvent[] {
  return [
    chatChunk({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name, arguments: '' } }],
    }),
    ...pieces.map((p) => chatChunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    chatChunk({}, 'tool_calls'),
    '[DONE]',
  ];
}

export const ANTHROPIC_USAGE = {
  input_tokens: 25,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 1,
};
export const SIGNATURE = 'EqQBCkYIBxgCKkBp0L3Signed+Thinking/Payload==';

export function messageStart(): object {
  return {
    type: 'message_start',
    message: {
      id: 'msg_spf',
      type: 'message',
      role: 'assistant',
      model: 'claude-same',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: ANTHROPIC_USAGE,
    },
  };
}
export const delta = (index: number, d: object): object => ({
  type: 'content_block_delta',
  index,
  delta: d,
});
export const messageEnd = (stop: string): object[] => [
  {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 40 },
  },
  { type: 'message_stop' },
];

/** Thinking in `thinking` pieces (signed), then a text answer in `text` pieces. */
export function thinkingEvents(thinking: string[], text: string[]): object[] {
  return [
    messageStart(),
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    },
    ...thinking.map((t) => delta(0, { type: 'thinking_delta', thinking: t })),
    delta(0, { type: 'signature_delta', signature: SIGNATURE }),
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    ...text.map((t) => delta(1, { type: 'text_delta', text: t })),
    { type: 'content_block_stop', index: 1 },
    ...messageEnd('end_turn'),
  ];
}

/** A tool_use block whose input arrives as `pieces` of JSON. */
export function toolUseEvents(name: string, pieces: string[]): object[] {
  return [
    messageStart(),
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_spf', name, input: {} },
    },
    ...pieces.map((p) => delta(0, { type: 'input_json_delta', partial_json: p })),
    { type: 'content_block_stop', index: 0 },
    ...messageEnd('tool_use'),
  ];
}

/** Everything of a Responses stream but the echoed request fields (`instructions`). */
export function withoutEcho(events: any[]): string {
  return JSON.stringify(
    events.map((e) => (e.response ? { ...e, response: { ...e.response, instructions: null } } : e)),
  );
}

export const NOTE_TOOL_CHAT = {
  type: 'function' as const,
  function: {
    name: 'save_note',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
};
export const WEATHER_CHAT = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
export const WEATHER_RESPONSES = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
export const WEATHER_MESSAGES = {
  name: 'get_weather',
  description: 'Current weather',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};
/** Tool arguments quoting the system prompt, JSON-escaped in places. */
export const LEAKY_ARGS = `{"city": "Paris", "note": "${BEFORE}${LEAK_MANGLED.replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace('Support', '\\u0053upport')}${AFTER}"}`;
