import type Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ANTHROPIC_SDKS } from './support/anthropic-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { checkResponseStream } from './support/responses-fixtures';
import {
  REPLIES,
  UPSTREAM_PATHS,
  UPSTREAM_USAGE,
  type UpstreamBlock,
  type UpstreamKind,
  checkUpstreamRequest,
  translationCatalog,
} from './support/translation-fixtures';

/**
 * The translation matrix: each inbound format x each upstream kind it reaches x
 * {non-streaming, streaming} x {plain text, tool round trip over two turns, reasoning
 * with a second turn}, through the official SDKs (stream helpers for streams), against
 * fake upstreams that check the translated request; usage equal on both sides.
 */

const SYSTEM = 'You are a terse assistant.';
type Json = Record<string, any>;

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  gw = await startGateway({ CATALOG_PATH: translationCatalog(upstream.url) });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => upstream.reset());

/** One answer as the client saw it, and how to continue the conversation. */
interface Turn {
  text: string;
  toolCalls: { id: string; name: string; args: string }[];
  reasoning: string;
  /** Opaque reasoning carriers the client received (signatures / encrypted_content). */
  carriers: string[];
  usage: { input: number; cached: number; output: number };
  /** The assistant turn as the client sends it back. */
  assistant: Json[];
}

interface Client {
  name: string;
  user(text: string): Json;
  toolResult(id: string, text: string): Json;
  send(
    model: string,
    history: Json[],
    o: { stream: boolean; tools?: boolean; reasoning?: boolean },
  ): Promise<Turn>;
}

const WEATHER_SCHEMA = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};

const chatClient: Client = {
  name: 'chat completions',
  user: (text) => ({ role: 'user', content: text }),
  toolResult: (id, text) => ({ role: 'tool', tool_call_id: id, content: text }),
  async send(model, history, o) {
    const body: Json = { model, messages: [{ role: 'system', content: SYSTEM }, ...history] };
    if (o.tools) {
      body.tools = [
        { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } },
      ];
    }
    if (o.reasoning) {
      body.reasoning_effort = 'low';
    }
    let message: Json;
    let usage: Json;
    let reasoning = '';
    let thinkingBlocks: Json[] = [];
    if (o.stream) {
      const stream = openai.chat.completions.stream({
        ...body,
        stream_options: { include_usage: true },
      } as never);
      stream.on('chunk', (chunk: Json) => {
        const delta = chunk.choices[0]?.delta ?? {};
        reasoning += delta.reasoning_content ?? '';
        thinkingBlocks.push(...((delta.thinking_blocks as Json[] | undefined) ?? []));
      });
      const final = await stream.finalChatCompletion();
      message = final.choices[0].message;
      usage = final.usage as Json;
    } else {
      const completion = await openai.chat.completions.create(body as never);
      message = completion.choices[0].message;
      usage = completion.usage as Json;
      reasoning = message.reasoning_content ?? '';
      thinkingBlocks = message.thinking_blocks ?? [];
    }
    const toolCalls = ((message.tool_calls ?? []) as Json[]).map((c) => ({
      id: c.id as string,
      name: c.function.name as string,
      args: c.function.arguments as string,
    }));
    const assistant: Json = { role: 'assistant', content: message.content ?? null };
    if (toolCalls.length > 0) {
      assistant.tool_calls = message.tool_calls;
    }
    if (thinkingBlocks.length > 0) {
      assistant.thinking_blocks = thinkingBlocks;
    }
    return {
      text: message.content ?? '',
      toolCalls,
      reasoning,
      carriers: thinkingBlocks.map((b) => b.signature as string),
      usage: {
        input: usage.prompt_tokens,
        cached: usage.prompt_tokens_details.cached_tokens,
        output: usage.completion_tokens,
      },
      assistant: [assistant],
    };
  },
};

const messagesClient = (Sdk: typeof Anthropic, line: string): Client => {
  const client = new Sdk({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
  return {
    name: `messages (SDK ${line})`,
    user: (text) => ({ role: 'user', content: text }),
    toolResult: (id, text) => ({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: text }],
    }),
    async send(model, history, o) {
      // Consecutive user turns (a tool result, then a question) are one Anthropic turn.
      const messages: Json[] = [];
      for (const m of history) {
        const last = messages[messages.length - 1];
        if (last?.role === 'user' && m.role === 'user') {
          const asBlocks = (c: unknown) =>
            typeof c === 'string' ? [{ type: 'text', text: c }] : c;
          last.content = [
            ...(asBlocks(last.content) as Json[]),
            ...(asBlocks(m.content) as Json[]),
          ];
        } else {
          messages.push({ ...m });
        }
      }
      const body: Json = { model, max_tokens: 4000, system: SYSTEM, messages };
      if (o.tools) {
        body.tools = [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }];
      }
      if (o.reasoning) {
        body.thinking = { type: 'enabled', budget_tokens: 2048 };
      }
      const message = (
        o.stream
          ? await client.messages.stream(body as never).finalMessage()
          : await client.messages.create(body as never)
      ) as Json;
      const content = message.content as Json[];
      const u = message.usage as Json;
      return {
        text: content
          .filter((b) => b.type === 'text')
          .map((b) => b.text as string)
          .join(''),
        toolCalls: content
          .filter((b) => b.type === 'tool_use')
          .map((b) => ({ id: b.id, name: b.name, args: JSON.stringify(b.input) })),
        reasoning: content
          .filter((b) => b.type === 'thinking')
          .map((b) => b.thinking as string)
          .join(''),
        carriers: content
          .filter((b) => b.type === 'thinking' && b.signature)
          .map((b) => b.signature),
        usage: {
          input:
            u.input_tokens +
            (u.cache_read_input_tokens ?? 0) +
            (u.cache_creation_input_tokens ?? 0),
          cached: u.cache_read_input_tokens ?? 0,
          output: u.output_tokens,
        },
        assistant: [{ role: 'assistant', content }],
      };
    },
  };
};

const responsesClient: Client = {
  name: 'responses',
  user: (text) => ({ role: 'user', content: text }),
  toolResult: (id, text) => ({ type: 'function_call_output', call_id: id, output: text }),
  async send(model, history, o) {
    const body: Json = {
      model,
      instructions: SYSTEM,
      input: history,
      include: ['reasoning.encrypted_content'],
    };
    if (o.tools) {
      body.tools = [
        { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false },
      ];
    }
    if (o.reasoning) {
      body.reasoning = { effort: 'low', summary: 'auto' };
    }
    let response: Json;
    if (o.stream) {
      const events: Json[] = [];
      const stream = openai.responses.stream(body as never);
      stream.on('event', (e: Json) => events.push(e));
      response = await stream.finalResponse();
      expect(() => checkResponseStream(events)).not.toThrow();
    } else {
      response = await openai.responses.create(body as never);
    }
    const output = response.output as Json[];
    return {
      text: response.output_text as string,
      toolCalls: output
        .filter((i) => i.type === 'function_call')
        .map((i) => ({ id: i.call_id, name: i.name, args: i.arguments })),
      reasoning: output
        .filter((i) => i.type === 'reasoning')
        .flatMap((i) => (i.summary as Json[]).map((s) => s.text as string))
        .join(''),
      carriers: output
        .filter((i) => i.type === 'reasoning' && i.encrypted_content)
        .map((i) => i.encrypted_content),
      usage: {
        input: response.usage.input_tokens,
        cached: response.usage.input_tokens_details.cached_tokens,
        output: response.usage.output_tokens,
      },
      assistant: output,
    };
  },
};

interface Cell {
  inbound: string;
  client: () => Client;
  kind: UpstreamKind;
  model: string;
}

const CELLS: Cell[] = [
  { inbound: 'chat completions', client: () => chatClient, kind: 'anthropic', model: 'claude-t' },
  { inbound: 'chat completions', client: () => chatClient, kind: 'responses', model: 'gpt-pro-t' },
  ...ANTHROPIC_SDKS.flatMap(({ Sdk, line }) => [
    {
      inbound: `messages (SDK ${line})`,
      client: () => messagesClient(Sdk, line),
      kind: 'responses' as const,
      model: 'gpt-pro-t',
    },
    {
      inbound: `messages (SDK ${line})`,
      client: () => messagesClient(Sdk, line),
      kind: 'chat' as const,
      model: 'vllm-t',
    },
  ]),
  { inbound: 'responses', client: () => responsesClient, kind: 'chat', model: 'vllm-t' },
];

/** The signed reasoning payload each upstream kind returns. */
const SIGNED: Record<UpstreamKind, string> = {
  anthropic: 'EqQBCkYIBxgCKkBp0L3Signed+Thinking/Payload==',
  responses: 'gAAAAABoEncryptedReasoning_-payload==',
  chat: '',
};

/** Scripts the upstream's next answer; request problems come back as a 400 naming them. */
function answer(
  kind: UpstreamKind,
  stream: boolean,
  blocks: UpstreamBlock[],
  check?: (body: Json) => void,
): void {
  upstream.on(UPSTREAM_PATHS[kind], (req) => {
    try {
      checkUpstreamRequest(kind, req.body as Json, stream);
      check?.(req.body as Json);
    } catch (e) {
      return {
        status: 400,
        json: { error: { message: String(e), type: 'invalid_request_error' } },
      };
    }
    return REPLIES[kind](blocks, stream);
  });
}

function expectUsage(turn: Turn, kind: UpstreamKind): void {
  const { input, cached, output } = UPSTREAM_USAGE[kind];
  expect(turn.usage).toEqual({ input, cached, output });
}

describe.each(CELLS.map((c) => [c.inbound, c.kind, c.model, c] as const))(
  '%s -> %s upstream (%s)',
  (_inbound, _kind, _model, cell) => {
    describe.each([false, true])('stream: %s', (stream) => {
      let client: Client;
      beforeAll(() => {
        client = cell.client();
      });

      it("answers plain text with the upstream's exact usage", async () => {
        answer(cell.kind, stream, [{ type: 'text', text: 'Hello there' }]);
        const turn = await client.send(cell.model, [client.user('Hi')], { stream });
        expect(turn.text).toBe('Hello there');
        expectUsage(turn, cell.kind);
      });

      it('round-trips a tool call over two turns with the call id preserved', async () => {
        const id = cell.kind === 'anthropic' ? 'toolu_w1' : 'call_w1';
        answer(cell.kind, stream, [
          { type: 'tool', id, name: 'get_weather', args: '{"city":"Paris"}' },
        ]);
        const first = await client.send(cell.model, [client.user('Weather in Paris?')], {
          stream,
          tools: true,
        });
        expect(first.toolCalls).toEqual([{ id, name: 'get_weather', args: expect.any(String) }]);
        expect(JSON.parse(first.toolCalls[0].args)).toEqual({ city: 'Paris' });
        expectUsage(first, cell.kind);

        answer(cell.kind, stream, [{ type: 'text', text: 'It is 18C' }], (body) => {
          const raw = JSON.stringify(body);
          const resultOf: Record<UpstreamKind, RegExp> = {
            anthropic:
              /"type":"tool_result","tool_use_id":"toolu_w1","content":\[\{"type":"text","text":"18C"\}\]/,
            responses: /"type":"function_call_output","call_id":"call_w1","output":"18C"/,
            chat: /"role":"tool","tool_call_id":"call_w1","content":"18C"/,
          };
          if (!resultOf[cell.kind].test(raw)) {
            throw new Error('the tool result did not reach the upstream under its call id');
          }
        });
        const second = await client.send(
          cell.model,
          [client.user('Weather in Paris?'), ...first.assistant, client.toolResult(id, '18C')],
          { stream, tools: true },
        );
        expect(second.text).toBe('It is 18C');
        expectUsage(second, cell.kind);
      });

      it('shows reasoning and restores the signed reasoning upstream on the second turn', async () => {
        const signature = SIGNED[cell.kind];
        const reasoningBlock: UpstreamBlock = {
          type: 'reasoning',
          text: 'Let me think.',
          signature,
        };
        answer(
          cell.kind,
          stream,
          [reasoningBlock, { type: 'text', text: 'Answer one' }],
          (body) => {
            const asked: Record<UpstreamKind, unknown> = {
              anthropic: body.thinking?.type === 'enabled',
              responses:
                body.reasoning?.effort !== undefined &&
                body.include?.includes('reasoning.encrypted_content'),
              chat: body.reasoning_effort !== undefined,
            };
            if (!asked[cell.kind]) {
              throw new Error('reasoning was not requested upstream');
            }
          },
        );
        const first = await client.send(cell.model, [client.user('Think first')], {
          stream,
          reasoning: true,
        });
        expect(first.reasoning).toContain('Let me think.');
        expect(first.text).toBe('Answer one');
        expectUsage(first, cell.kind);
        if (signature !== '') {
          expect(first.carriers).toHaveLength(1);
          expect(first.carriers[0]).toContain(signature);
        }

        answer(cell.kind, stream, [{ type: 'text', text: 'Answer two' }], (body) => {
          const raw = JSON.stringify(body);
          if (cell.kind === 'anthropic') {
            const assistant = (body.messages as Json[])[1];
            if (
              assistant.content[0]?.type !== 'thinking' ||
              assistant.content[0].signature !== signature
            ) {
              throw new Error(
                'the signed thinking block was not restored first in the assistant turn',
              );
            }
          } else if (cell.kind === 'responses') {
            const item = (body.input as Json[]).find((i) => i.type === 'reasoning');
            if (item?.encrypted_content !== signature || item.id !== 'rs_up_0') {
              throw new Error('the encrypted reasoning item was not restored');
            }
          } else if (raw.includes('Let me think.')) {
            throw new Error('earlier reasoning must not be sent to a chat upstream');
          }
        });
        const second = await client.send(
          cell.model,
          [client.user('Think first'), ...first.assistant, client.user('And then?')],
          { stream, reasoning: true },
        );
        expect(second.text).toBe('Answer two');
        expectUsage(second, cell.kind);
      });
    });
  },
);

describe('translated errors and parameters', () => {
  it('answers an Anthropic 529 on /v1/chat/completions as a 503 in the OpenAI envelope', async () => {
    upstream.on('/v1/messages', () => ({
      status: 529,
      json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    }));
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-t',
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'hi' },
        ],
      }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as Json;
    expect(body.error).toMatchObject({ type: 'server_error' });
  });

  it('answers an Anthropic 529 before a translated stream starts with a 503, not an in-band error', async () => {
    upstream.on('/v1/messages', () => ({
      status: 529,
      json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    }));
    const e = await openai.chat.completions
      .create({
        model: 'claude-t',
        stream: true,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'hi' },
        ],
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect((e as { status: number }).status).toBe(503);
  });

  it('rejects n > 1 for an Anthropic model with a 400 naming n, before any upstream call', async () => {
    const e = await openai.chat.completions
      .create({
        model: 'claude-t',
        n: 2,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'hi' },
        ],
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e as { param: string }).param).toBe('n');
    expect(upstream.requests).toHaveLength(0);
  });

  it('lists dropped parameters in x-gateway-dropped-params and still answers', async () => {
    answer('anthropic', false, [{ type: 'text', text: 'ok' }], (body) => {
      if ('seed' in body || 'presence_penalty' in body) {
        throw new Error('dropped parameters were sent');
      }
    });
    const { response } = await openai.chat.completions
      .create({
        model: 'claude-t',
        seed: 7,
        presence_penalty: 0.5,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'hi' },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed, presence_penalty');
  });

  it('drops an Anthropic server tool offered to a GPT model and names it; a forced one is a 400', async () => {
    const claude = new ANTHROPIC_SDKS[0].Sdk({
      baseURL: gw.origin,
      apiKey: TEST_KEY,
      maxRetries: 0,
    });
    const tools = [
      { type: 'web_search_20250305', name: 'web_search', max_uses: 1 },
      { name: 'get_weather', description: 'Weather.', input_schema: WEATHER_SCHEMA },
    ];
    answer('chat', false, [{ type: 'text', text: 'ok' }], (body) => {
      const names = (body.tools as Json[]).map((t) => t.function.name);
      if (names.join() !== 'get_weather') {
        throw new Error(`tools sent: ${names.join()}`);
      }
    });
    const { response } = await claude.messages
      .create({
        model: 'vllm-t',
        max_tokens: 100,
        system: SYSTEM,
        tools,
        messages: [{ role: 'user', content: 'hi' }],
      } as never)
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-dropped-params')).toBe('tools.web_search_20250305');
    const forced = await claude.messages
      .create({
        model: 'vllm-t',
        max_tokens: 100,
        system: SYSTEM,
        tools,
        tool_choice: { type: 'tool', name: 'web_search' },
        messages: [{ role: 'user', content: 'hi' }],
      } as never)
      .then(
        () => undefined,
        (err: unknown) => err as { status: number; error: { error: { message: string } } },
      );
    expect(forced?.status).toBe(400);
    expect(forced?.error.error.message).toMatch(/web_search_20250305.*forced by 'tool_choice'/);
  });

  it('carries an in-stream upstream error into the chat stream as an error event', async () => {
    upstream.on('/v1/messages', () => ({
      sse: [
        {
          event: 'message_start',
          data: {
            type: 'message_start',
            message: {
              id: 'm',
              model: 'c',
              content: [],
              usage: { input_tokens: 1, output_tokens: 1 },
            },
          },
        },
        {
          event: 'error',
          data: {
            type: 'error',
            error: { type: 'overloaded_error', message: 'Overloaded mid-stream' },
          },
        },
      ],
    }));
    const stream = openai.chat.completions.stream({
      model: 'claude-t',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'hi' },
      ],
    });
    await expect(stream.finalChatCompletion()).rejects.toThrow(/Overloaded mid-stream/);
  });
});
