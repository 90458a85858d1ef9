import { FakeUpstream, type RecordedRequest, type Reply } from '../support/fake-upstream';
import { startGateway, writeCatalog, type TestGateway } from '../support/gateway';
import { REPLIES, type UpstreamBlock, type UpstreamKind } from '../support/translation-fixtures';

/**
 * A fake provider that answers like a model, for the client compatibility suites: it reads
 * the request in its own API (Chat Completions, Responses, Anthropic Messages) and answers
 * with a tool call, a structured-output JSON text or an echo, with reasoning first when the
 * request asks for it, streamed or not. Client libraries run whole loops against it (tool
 * round trips, generateObject), which scripted single answers cannot drive.
 */

type Json = Record<string, any>;

/** The catalog of the compatibility suites: every upstream API, native and translated. */
export const MODELS = {
  /** openai family, served by the fake's Chat Completions API. */
  gptChat: 'compat-gpt-chat',
  /** openai family, served by an OpenAI-compatible provider (Chat Completions only). */
  vllm: 'compat-vllm',
  /** openai family, served by the fake's Responses API. */
  gptResponses: 'compat-gpt-responses',
  /** anthropic family, served by the fake's Messages API. */
  claude: 'compat-claude',
  localGpt: 'local-echo-gpt',
  localClaude: 'local-echo-claude',
} as const;

function compatCatalog(url: string): string {
  return writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: ${url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-vllm, kind: openai-compatible, base_url: ${url}/vllm/v1 }
  - { name: fake-anthropic, kind: anthropic, base_url: ${url}, api_key_env: TEST_UPSTREAM_KEY }
  - { name: local, kind: local }
models:
  - { id: ${MODELS.gptChat}, upstream_id: up-gpt-chat, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { reasoning: true, tools: true } }
  - { id: ${MODELS.vllm}, upstream_id: up-vllm, provider: fake-vllm, family: openai, context_window: 32000, max_output_tokens: 4096, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: ${MODELS.gptResponses}, upstream_id: up-gpt-responses, provider: fake-openai, family: openai, upstream_api: responses, context_window: 400000, max_output_tokens: 128000, pricing: { input: 1, output: 8 }, capabilities: { reasoning: true, tools: true } }
  - { id: ${MODELS.claude}, upstream_id: up-claude, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: ${MODELS.localGpt}, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: ${MODELS.localClaude}, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

/** What the fake reads of a request, whatever its API. */
export interface Ask {
  system: string;
  userText: string;
  toolResult?: string;
  tools: { name: string; schema: Json }[];
  forcedTool?: string;
  /** `required` / `any`: some tool must be called. */
  toolRequired: boolean;
  schema?: Json;
  reasoning: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  if (!Array.isArray(content)) {
    return '';
  }
  return content
    .map((p: Json) => (typeof p?.text === 'string' ? p.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

function chatAsk(body: Json): Ask {
  const messages = (body.messages ?? []) as Json[];
  // A system message may now follow the tool results (it keeps its place in the
  // conversation): the turn still answers the last tool result.
  const last = messages.filter((m) => m.role !== 'system' && m.role !== 'developer').at(-1);
  const users = messages.filter((m) => m.role === 'user');
  const format = body.response_format as Json | undefined;
  return {
    system: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => textOf(m.content))
      .join('\n'),
    userText: textOf(users[users.length - 1]?.content),
    toolResult: last?.role === 'tool' ? textOf(last.content) : undefined,
    tools: ((body.tools ?? []) as Json[]).map((t) => ({
      name: t.function.name as string,
      schema: (t.function.parameters ?? {}) as Json,
    })),
    forcedTool: body.tool_choice?.function?.name as string | undefined,
    toolRequired: body.tool_choice === 'required',
    schema:
      format?.type === 'json_schema'
        ? (format.json_schema.schema as Json)
        : format?.type === 'json_object'
          ? {}
          : undefined,
    reasoning: typeof body.reasoning_effort === 'string' && body.reasoning_effort !== 'none',
  };
}

function responsesAsk(body: Json): Ask {
  const input: Json[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const last = input[input.length - 1];
  const users = input.filter((i) => (i.type ?? 'message') === 'message' && i.role === 'user');
  const format = body.text?.format as Json | undefined;
  const system = input
    .filter((i) => i.role === 'system' || i.role === 'developer')
    .map((i) => textOf(i.content));
  return {
    system: [body.instructions ?? '', ...system].filter(Boolean).join('\n'),
    userText: textOf(users[users.length - 1]?.content),
    toolResult: last?.type === 'function_call_output' ? textOf(last.output) : undefined,
    tools: ((body.tools ?? []) as Json[])
      .filter((t) => t.type === 'function')
      .map((t) => ({ name: t.name as string, schema: (t.parameters ?? {}) as Json })),
    forcedTool: body.tool_choice?.type === 'function' ? body.tool_choice.name : undefined,
    toolRequired: body.tool_choice === 'required',
    schema:
      format?.type === 'json_schema'
        ? (format.schema as Json)
        : format?.type === 'json_object'
          ? {}
          : undefined,
    reasoning: typeof body.reasoning?.effort === 'string' && body.reasoning.effort !== 'none',
  };
}

function anthropicAsk(body: Json): Ask {
  const messages = (body.messages ?? []) as Json[];
  const last = messages[messages.length - 1];
  const lastBlocks: Json[] = Array.isArray(last?.content) ? last.content : [];
  const result = lastBlocks.find((b) => b.type === 'tool_result');
  const userTexts = messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : textOf((m.content as Json[]).filter((b) => b.type === 'text')),
    )
    .filter((t) => t !== '');
  const format = body.output_config?.format ?? body.output_format;
  return {
    system: textOf(body.system),
    userText: userTexts[userTexts.length - 1] ?? '',
    toolResult: result ? textOf(result.content) : undefined,
    tools: ((body.tools ?? []) as Json[]).map((t) => ({
      name: t.name as string,
      schema: (t.input_schema ?? {}) as Json,
    })),
    forcedTool: body.tool_choice?.type === 'tool' ? body.tool_choice.name : undefined,
    toolRequired: body.tool_choice?.type === 'any',
    schema: format?.type === 'json_schema' ? (format.schema as Json) : undefined,
    reasoning: body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive',
  };
}

/** A value for a JSON schema: every property filled, the first enum value, fixed scalars. */
export function sampleOf(schema: Json): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'Paris';
    case 'number':
    case 'integer':
      return 18;
    case 'boolean':
      return true;
    case 'array':
      return schema.items ? [sampleOf(schema.items as Json)] : [];
    default: {
      const out: Json = {};
      for (const [name, sub] of Object.entries((schema.properties ?? {}) as Json)) {
        out[name] = sampleOf(sub as Json);
      }
      return out;
    }
  }
}

export const REASONING_TEXT = 'Thinking it over.';
export const SIGNATURE = 'EqQBCkYIBxgCKkBcompatSignature==';

function answer(ask: Ask, kind: UpstreamKind): UpstreamBlock[] {
  const blocks: UpstreamBlock[] = ask.reasoning
    ? [{ type: 'reasoning', text: REASONING_TEXT, signature: SIGNATURE }]
    : [];
  const named = ask.tools.find((t) => ask.userText.includes(t.name));
  const tool =
    ask.toolResult === undefined
      ? (ask.tools.find((t) => t.name === ask.forcedTool) ??
        named ??
        (ask.toolRequired ? ask.tools[0] : undefined))
      : undefined;
  if (ask.toolResult !== undefined) {
    blocks.push({ type: 'text', text: `Tool result: ${ask.toolResult}` });
  } else if (tool) {
    const id = kind === 'anthropic' ? 'toolu_up_1' : 'call_up_1';
    blocks.push({ type: 'tool', id, name: tool.name, args: JSON.stringify(sampleOf(tool.schema)) });
  } else if (ask.schema) {
    blocks.push({ type: 'text', text: JSON.stringify(sampleOf(ask.schema)) });
  } else {
    blocks.push({ type: 'text', text: `Hello from ${kind}: ${ask.userText}` });
  }
  return blocks;
}

const ASK: Record<UpstreamKind, (body: Json) => Ask> = {
  chat: chatAsk,
  responses: responsesAsk,
  anthropic: anthropicAsk,
};

function modelLike(kind: UpstreamKind) {
  return (req: RecordedRequest): Reply =>
    REPLIES[kind](answer(ASK[kind](req.body as Json), kind), req.body?.stream === true);
}

export interface CompatRig {
  gw: TestGateway;
  upstream: FakeUpstream;
  close(): Promise<void>;
  /** The last generation request any fake provider API received, and which API it was. */
  lastUpstream(): { kind: UpstreamKind; body: Json } | undefined;
}

const PATHS: [string, UpstreamKind][] = [
  ['/v1/chat/completions', 'chat'],
  ['/vllm/v1/chat/completions', 'chat'],
  ['/v1/responses', 'responses'],
  ['/v1/messages', 'anthropic'],
];

/** One gateway and one model-like fake provider, shared by a whole suite. */
export async function startCompatRig(): Promise<CompatRig> {
  const upstream = await new FakeUpstream().start();
  for (const [path, kind] of PATHS) {
    upstream.on(path, modelLike(kind));
  }
  upstream.on('/v1/messages/count_tokens', () => ({ json: { input_tokens: 42 } }));
  const gw = await startGateway({ CATALOG_PATH: compatCatalog(upstream.url) });
  const kindOf = new Map(PATHS);
  return {
    gw,
    upstream,
    lastUpstream() {
      const hit = upstream.requests.filter((r) => kindOf.has(r.path)).at(-1);
      return hit && { kind: kindOf.get(hit.path)!, body: hit.body as Json };
    },
    async close() {
      await gw.close();
      await upstream.stop();
    },
  };
}

/** Whether a catalog model is one of the local models (no upstream request to look at). */
export function isLocal(model: string): boolean {
  return model === MODELS.localGpt || model === MODELS.localClaude;
}

/**
 * What the last upstream request carried as its system prompt, read the way its API
 * carries it, and which API it went to. Call it right after a call to a fake-served model.
 */
export function upstreamSeen(rig: CompatRig): { kind: UpstreamKind; system: string; ask: Ask } {
  const last = rig.lastUpstream();
  if (!last) {
    throw new Error('no request reached a fake provider');
  }
  const ask = ASK[last.kind](last.body);
  return { kind: last.kind, system: ask.system, ask };
}

/**
 * The answer to a plain prompt: the local echo, or the fake provider naming the API it was
 * reached through; then the system prompt must have reached that API, in its own place.
 */
export function expectAnswer(
  rig: CompatRig,
  system: string,
  model: string,
  text: string | null | undefined,
  user: string,
): void {
  if (isLocal(model)) {
    expect(text).toBe(`Echo: ${user}`);
    return;
  }
  const seen = upstreamSeen(rig);
  expect(text).toBe(`Hello from ${seen.kind}: ${user}`);
  expect(seen.system).toBe(system);
}
