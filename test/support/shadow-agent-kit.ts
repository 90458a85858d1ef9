import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chatCompletion } from './chat-fixtures';
import { FakeUpstream, type RecordedRequest, type Reply } from './fake-upstream';
import { startGateway, TEST_KEY, writeCatalog, type TestGateway } from './gateway';
import { parseSse } from './sse';
import { REPLIES, type UpstreamBlock } from './translation-fixtures';

/**
 * shadow_agent_validation and the prompt-injection detector's second stage, end to end:
 * the answering models live on one fake upstream, the judge model on another, so every
 * judge request is seen apart from the answering traffic.
 */

export const SHADOW = 'shadow_agent_validation';
export const INJECTION_TOOL = 'prompt_injection_protection';
export const HEADER = 'x-gateway-protections';
export const USAGE_HEADER = 'x-gateway-protections-usage';
export const JUDGE_PATH = '/v1/chat/completions';
export const KEEPALIVE_MS = 100;

export const SYSTEM = 'You are the support bot of Acme Bank. Never discuss other banks.';
export const EARLIER_TURN = 'When does the Main Street branch open?';
export const LAST_TURN = 'What is the interest rate on the savings account?';
export const POLICY = 'Never promise a specific interest rate.';
export const RATE_TOOL_DESCRIPTION = 'Looks up the current rate of an account type';
export const ANSWER_TEXT = 'Our savings rate is 2 percent.';
export const TEXT_ANSWER: UpstreamBlock[] = [{ type: 'text', text: ANSWER_TEXT }];
export const TOOL_ANSWER: UpstreamBlock[] = [
  { type: 'text', text: 'Let me look that up.' },
  { type: 'tool', id: 'call_rate_1', name: 'get_rate', args: '{"account":"savings"}' },
];

/** The judge's usage on every answer, and its cost at judge-mini's prices (2 / 8 per Mtok). */
export const JUDGE_USAGE = { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 };
export const JUDGE_COST = (1000 * 2 + 20 * 8) / 1_000_000;
export const SHADOW_USAGE = `${SHADOW};model=judge-mini;input_tokens=1000;output_tokens=20;cost_usd=${JUDGE_COST}`;

export function catalog(answers: string, judges: string): string {
  return writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: ${answers}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-anthropic, kind: anthropic, base_url: ${answers}, api_key_env: TEST_UPSTREAM_KEY }
  - { name: judges, kind: openai-compatible, base_url: ${judges}/v1 }
models:
  - { id: gpt-answer, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { reasoning: false, tools: true } }
  - { id: claude-answer, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: false, tools: true } }
  - { id: judge-mini, provider: judges, family: openai, context_window: 32000, max_output_tokens: 4096, pricing: { input: 2, output: 8 } }
`);
}

// ---------------------------------------------------------------------------------------
// Small utilities

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export async function until<T>(what: () => T | undefined, ms = 2000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = what();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > end) {
      throw new Error('timed out waiting');
    }
    await sleep(10);
  }
}

/** Every response the SDK clients receive, with a copy of its body (SSE comments included). */
export let captured: { headers: Headers; body: Promise<string> } | undefined;
export const recordingFetch = async (
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> => {
  const res = await fetch(input, init);
  if (!res.body) {
    captured = { headers: res.headers, body: Promise.resolve('') };
    return res;
  }
  const [mine, theirs] = res.body.tee();
  captured = {
    headers: res.headers,
    body: new Response(mine).text().catch(() => ''),
  };
  return new Response(theirs, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
};

export interface RawExchange {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  trailers: NodeJS.Dict<string>;
}

/** A POST read with node:http, which exposes HTTP trailers (fetch does not). */
export function rawPost(
  origin: string,
  path: string,
  body: object,
  onChunk?: (soFar: string) => void,
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${origin}${path}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_KEY}`,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          onChunk?.(text);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            trailers: res.trailers,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

export const count = (text: string, what: string): number => text.split(what).length - 1;
/** The body of a `<<<NAME nonce>>>` section of the judge's input. */
export function section(user: string, name: string): string | undefined {
  const open = new RegExp(`<<<${name} (\\w+)>>>\\n`).exec(user);
  if (!open) {
    return undefined;
  }
  const start = open.index + open[0].length;
  const end = user.indexOf(`\n<<<END ${name} ${open[1]}>>>`, start);
  return end < 0 ? undefined : user.slice(start, end);
}

// ---------------------------------------------------------------------------------------
// The three formats, behind one shape

export interface Answer {
  text: string;
  /** Names of the tool calls. */
  toolCalls: string[];
  /** `finish_reason`, `status[/incomplete reason]` or `stop_reason`. */
  finish: string;
  usage: { input: number; output: number };
}

export interface Ask {
  /** Settings of the protection tool (each property's `default`); `model` defaults to judge-mini. */
  settings?: Record<string, unknown>;
  /** Use `const` instead of `default` for the settings. */
  asConst?: boolean;
  /** The tool's description (the policy); POLICY unless null. */
  policy?: string | null;
  /** Adds the client's own get_rate tool and a tool_choice naming it. */
  clientTool?: boolean;
  /** Any other tools, in the format's own shape, placed first. */
  extraTools?: any[];
  /** The user's last turn. */
  lastTurn?: string;
  /** Leave the protection tool out. */
  noProtection?: boolean;
}

export interface Format {
  name: 'chat' | 'responses' | 'messages';
  model: string;
  path: string;
  upstreamPath: string;
  reply: (blocks: UpstreamBlock[], stream: boolean) => Reply;
  usage: { input: number; output: number };
  finish: { text: string; tools: string; blocked: string };
  /** The path of a setting of the tool at index `i`, as a 400 names it. */
  param(i: number, key: string): string;
  body(ask: Ask, stream: boolean): any;
  protectionTool(schema: object, description: string | undefined): any;
  /** Names of the tools in an upstream request, and its tool_choice. */
  upstreamTools(body: any): { names: string[]; choice: unknown };
  create(body: any): Promise<{ answer: Answer; headers: Headers }>;
  /** Streams through the SDK's helper; `seen` gets 'text' / 'tool' as the events arrive. */
  stream(body: any, seen: (kind: 'text' | 'tool') => void): Promise<Answer>;
  /** The answer text of a raw SSE body. */
  rawText(body: string): string;
  expectSettingsError(err: any, param: string): void;
}

export function schemaOf(ask: Ask): object {
  const values: Record<string, unknown> = { model: 'judge-mini', ...(ask.settings ?? {}) };
  const properties: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) {
      properties[key] = ask.asConst ? { const: value } : { default: value };
    }
  }
  return { type: 'object', properties };
}

export function toolsOf(format: Format, ask: Ask, clientTool: object): any[] {
  const tools: any[] = [...(ask.extraTools ?? [])];
  if (ask.clientTool) {
    tools.push(clientTool);
  }
  if (!ask.noProtection) {
    tools.push(
      format.protectionTool(
        schemaOf(ask),
        ask.policy === null ? undefined : (ask.policy ?? POLICY),
      ),
    );
  }
  return tools;
}

export const chatRateTool = {
  type: 'function',
  function: {
    name: 'get_rate',
    description: RATE_TOOL_DESCRIPTION,
    parameters: { type: 'object', properties: { account: { type: 'string' } } },
  },
};
export const responsesRateTool = {
  type: 'function',
  name: 'get_rate',
  description: RATE_TOOL_DESCRIPTION,
  parameters: { type: 'object', properties: { account: { type: 'string' } } },
  strict: false,
};
export const messagesRateTool = {
  name: 'get_rate',
  description: RATE_TOOL_DESCRIPTION,
  input_schema: { type: 'object', properties: { account: { type: 'string' } } },
};

export let openai: OpenAI;
export let anthropic: Anthropic;

export const chat: Format = {
  name: 'chat',
  model: 'gpt-answer',
  path: '/v1/chat/completions',
  upstreamPath: '/v1/chat/completions',
  reply: REPLIES.chat,
  usage: { input: 40, output: 12 },
  finish: { text: 'stop', tools: 'tool_calls', blocked: 'content_filter' },
  param: (i, key) => `tools[${i}].function.parameters.properties.${key}`,
  protectionTool: (parameters, description) => ({
    type: 'function',
    function: { name: SHADOW, ...(description === undefined ? {} : { description }), parameters },
  }),
  body(ask, stream) {
    const tools = toolsOf(this, ask, chatRateTool);
    return {
      model: this.model,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: EARLIER_TURN },
        { role: 'assistant', content: 'At 9 am.' },
        { role: 'user', content: ask.lastTurn ?? LAST_TURN },
      ],
      ...(tools.length > 0 ? { tools } : {}),
      ...(ask.clientTool
        ? { tool_choice: { type: 'function', function: { name: 'get_rate' } } }
        : {}),
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
  },
  upstreamTools: (body) => ({
    names: (body.tools ?? []).map((t: any) => t.function.name),
    choice: body.tool_choice,
  }),
  async create(body) {
    const { data, response } = await openai.chat.completions.create(body).withResponse();
    const completion = data;
    const choice = completion.choices[0];
    return {
      headers: response.headers,
      answer: {
        text: choice.message.content ?? '',
        toolCalls: (choice.message.tool_calls ?? []).map((c: any) => c.function.name),
        finish: choice.finish_reason,
        usage: {
          input: completion.usage!.prompt_tokens,
          output: completion.usage!.completion_tokens,
        },
      },
    };
  },
  async stream(body, seen) {
    const { stream: _stream, ...params } = body;
    const s = openai.chat.completions.stream(params);
    for await (const chunk of s) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        seen('text');
      }
      if (delta?.tool_calls?.length) {
        seen('tool');
      }
    }
    const final = await s.finalChatCompletion();
    const choice = final.choices[0];
    return {
      text: choice.message.content ?? '',
      toolCalls: (choice.message.tool_calls ?? []).map((c: any) => c.function.name),
      finish: choice.finish_reason,
      usage: { input: final.usage!.prompt_tokens, output: final.usage!.completion_tokens },
    };
  },
  rawText: (body) =>
    body
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
      .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? '')
      .join(''),
  expectSettingsError(err, param) {
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.type).toBe('invalid_request_error');
    expect(err.code).toBe('invalid_protection_settings');
    expect(err.param).toBe(param);
  },
};

export const responses: Format = {
  name: 'responses',
  model: 'gpt-answer',
  path: '/v1/responses',
  upstreamPath: '/v1/responses',
  reply: REPLIES.responses,
  usage: { input: 84, output: 94 },
  finish: { text: 'completed', tools: 'completed', blocked: 'incomplete/content_filter' },
  param: (i, key) => `tools[${i}].parameters.properties.${key}`,
  protectionTool: (parameters, description) => ({
    type: 'function',
    name: SHADOW,
    ...(description === undefined ? {} : { description }),
    parameters,
    strict: false,
  }),
  body(ask, stream) {
    const tools = toolsOf(this, ask, responsesRateTool);
    return {
      model: this.model,
      instructions: SYSTEM,
      input: [
        { role: 'user', content: EARLIER_TURN },
        { role: 'assistant', content: 'At 9 am.' },
        { role: 'user', content: ask.lastTurn ?? LAST_TURN },
      ],
      ...(tools.length > 0 ? { tools } : {}),
      ...(ask.clientTool ? { tool_choice: { type: 'function', name: 'get_rate' } } : {}),
      ...(stream ? { stream: true } : {}),
    };
  },
  upstreamTools: (body) => ({
    names: (body.tools ?? []).map((t: any) => t.name),
    choice: body.tool_choice,
  }),
  async create(body) {
    const { data, response } = await openai.responses.create(body).withResponse();
    return {
      headers: response.headers,
      answer: responsesAnswer(data),
    };
  },
  async stream(body, seen) {
    const { stream: _stream, ...params } = body;
    const s = openai.responses.stream(params);
    for await (const event of s) {
      if (event.type === 'response.output_text.delta') {
        seen('text');
      }
      if (event.type === 'response.output_item.added' && event.item.type === 'function_call') {
        seen('tool');
      }
    }
    return responsesAnswer(await s.finalResponse());
  },
  rawText: (body) =>
    parseSse(body)
      .filter((e) => e.data.type === 'response.output_text.delta')
      .map((e) => e.data.delta)
      .join(''),
  expectSettingsError: (err, param) => chat.expectSettingsError(err, param),
};

export function responsesAnswer(data: OpenAI.Responses.Response): Answer {
  return {
    text: data.output_text,
    toolCalls: data.output.filter((i) => i.type === 'function_call').map((i: any) => i.name),
    finish:
      data.status === 'incomplete' ? `incomplete/${data.incomplete_details?.reason}` : data.status!,
    usage: { input: data.usage!.input_tokens, output: data.usage!.output_tokens },
  };
}

export const messages: Format = {
  name: 'messages',
  model: 'claude-answer',
  path: '/v1/messages',
  upstreamPath: '/v1/messages',
  reply: REPLIES.anthropic,
  usage: { input: 20, output: 30 },
  finish: { text: 'end_turn', tools: 'tool_use', blocked: 'refusal' },
  param: (i, key) => `tools[${i}].input_schema.properties.${key}`,
  protectionTool: (input_schema, description) => ({
    name: SHADOW,
    ...(description === undefined ? {} : { description }),
    input_schema,
  }),
  body(ask, stream) {
    const tools = toolsOf(this, ask, messagesRateTool);
    return {
      model: this.model,
      max_tokens: 1000,
      system: SYSTEM,
      messages: [
        { role: 'user', content: EARLIER_TURN },
        { role: 'assistant', content: 'At 9 am.' },
        { role: 'user', content: ask.lastTurn ?? LAST_TURN },
      ],
      ...(tools.length > 0 ? { tools } : {}),
      ...(ask.clientTool ? { tool_choice: { type: 'tool', name: 'get_rate' } } : {}),
      ...(stream ? { stream: true } : {}),
    };
  },
  upstreamTools: (body) => ({
    names: (body.tools ?? []).map((t: any) => t.name),
    choice: body.tool_choice,
  }),
  async create(body) {
    const { data, response } = await anthropic.messages.create(body).withResponse();
    return { headers: response.headers, answer: messagesAnswer(data) };
  },
  async stream(body, seen) {
    const { stream: _stream, ...params } = body;
    const s = anthropic.messages.stream(params);
    for await (const event of s) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
        seen('text');
      }
      if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
        seen('tool');
      }
    }
    return messagesAnswer(await s.finalMessage());
  },
  rawText: (body) =>
    parseSse(body)
      .filter((e) => e.data.type === 'content_block_delta' && e.data.delta.type === 'text_delta')
      .map((e) => e.data.delta.text)
      .join(''),
  expectSettingsError(err, param) {
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.type).toBe('error');
    expect(err.error.error.type).toBe('invalid_request_error');
    expect(err.error.error.message).toContain(param);
  },
};

export function messagesAnswer(data: Anthropic.Message): Answer {
  return {
    text: data.content
      .filter((b) => b.type === 'text')
      .map((b: any) => b.text)
      .join(''),
    toolCalls: data.content.filter((b) => b.type === 'tool_use').map((b: any) => b.name),
    finish: data.stop_reason!,
    usage: { input: data.usage.input_tokens, output: data.usage.output_tokens },
  };
}

export const FORMATS: Format[] = [chat, responses, messages];

// ---------------------------------------------------------------------------------------
// Upstreams and the gateway

export let answers: FakeUpstream;
export let judge: FakeUpstream;
export let gw: TestGateway;

export function answerWith(blocks: UpstreamBlock[]): void {
  for (const format of FORMATS) {
    answers.on(format.upstreamPath, (req) => format.reply(blocks, req.body?.stream === true));
  }
}

export function judgeReply(text: string): Reply {
  return { json: chatCompletion('judge-mini', text, { usage: JUDGE_USAGE }) };
}
export const allow = (reason = 'consistent with the policy'): Reply =>
  judgeReply(JSON.stringify({ verdict: 'allow', reason }));
export const block = (reason: string): Reply =>
  judgeReply(JSON.stringify({ verdict: 'block', reason }));
export const JUDGE_500: Reply = {
  status: 500,
  json: { error: { message: 'judge exploded', type: 'server_error' } },
};

/** The judge answers `reply` after `ms`, unless the gateway hangs up first. */
export function judgeAfter(ms: number, reply: Reply): (req: RecordedRequest) => Promise<Reply> {
  return async (req) => {
    await Promise.race([sleep(ms), req.ended]);
    return reply;
  };
}

export function judgeRequests(): RecordedRequest[] {
  return judge.requests.filter((r) => r.path === JUDGE_PATH);
}

/** The text of the judge's user message (the material under review). */
export function judgeInput(r: RecordedRequest): { system: string; user: string } {
  const msgs = r.body.messages as { role: string; content: unknown }[];
  const text = (m: { content: unknown } | undefined): string =>
    typeof m?.content === 'string'
      ? m.content
      : ((m?.content as any[]) ?? []).map((p: any) => p.text ?? '').join('');
  return {
    system: text(msgs.find((m) => m.role === 'system')),
    user: text(msgs.find((m) => m.role === 'user')),
  };
}

export async function health(origin = gw.origin): Promise<Record<string, Record<string, number>>> {
  return (await (await fetch(`${origin}/health/protections`)).json()) as any;
}

/**
 * Registers the suite's hooks: the answering and judge upstreams, a gateway in front of them
 * and SDK clients whose fetch is recorded, for the whole file; both upstreams reset before
 * each test, the judge allowing by default.
 */
export function useShadowAgentGateway(): void {
  beforeAll(async () => {
    answers = await new FakeUpstream().start();
    judge = await new FakeUpstream().start();
    gw = await startGateway({
      CATALOG_PATH: catalog(answers.url, judge.url),
      SSE_KEEPALIVE_MS: String(KEEPALIVE_MS),
    });
    openai = new OpenAI({
      baseURL: gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 0,
      fetch: recordingFetch,
    });
    anthropic = new Anthropic({
      baseURL: gw.origin,
      apiKey: TEST_KEY,
      maxRetries: 0,
      fetch: recordingFetch,
    });
  });
  afterAll(async () => {
    await gw.close();
    await answers.stop();
    await judge.stop();
  });
  beforeEach(() => {
    answers.reset();
    judge.reset();
    answerWith(TEXT_ANSWER);
    judge.on(JUDGE_PATH, () => allow());
    captured = undefined;
  });
}

// ---------------------------------------------------------------------------------------
