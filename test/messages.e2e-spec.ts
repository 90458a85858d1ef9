import type Anthropic from '@anthropic-ai/sdk';
import {
  ANTHROPIC_SDKS,
  SIGNATURE,
  UPSTREAM_MODEL,
  WEATHER_TOOL,
  anthropicMessage,
  messagesCatalog,
  named,
  textEvents,
  thinkingToolEvents,
} from './support/anthropic-fixtures';
import { sseEvents } from './support/sse';
import { recordedLines } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { post as httpPost } from './support/http';

const SYSTEM = 'You are a terse assistant.';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let upstream: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  gw = await startGateway({ CATALOG_PATH: messagesCatalog(upstream.url), SSE_KEEPALIVE_MS: '100' });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => upstream.reset());

/** The access-log line of a request, once the response is over. */
async function logOf(requestId: string | null): Promise<Record<string, unknown> | undefined> {
  for (let i = 0; i < 50; i++) {
    const line = gw.logs.find((l) => l.msg === 'request' && l.requestId === requestId);
    if (line) {
      return line;
    }
    await sleep(10);
  }
  return undefined;
}

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return httpPost(gw.origin, path, body, { 'x-api-key': TEST_KEY, ...headers }, null);
}

describe.each(ANTHROPIC_SDKS)(
  'POST /v1/messages to an Anthropic upstream with the Anthropic SDK $line',
  ({ Sdk, version }) => {
    let client: Anthropic;

    beforeAll(() => {
      client = new Sdk({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
    });

    it('forwards a non-streaming request with the upstream id and the gateway key, and returns the catalog id', async () => {
      upstream.on('/v1/messages', () => ({
        json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'Bonjour' }]),
      }));
      const { data: message, response } = await client.messages
        .create({
          model: 'test-claude',
          max_tokens: 1024,
          system: SYSTEM,
          messages: [{ role: 'user', content: 'Say hello in French' }],
        })
        .withResponse();
      expect(message.content).toEqual([{ type: 'text', text: 'Bonjour' }]);
      expect(message.model).toBe('test-claude');
      expect(message.stop_reason).toBe('end_turn');
      const sent = upstream.last();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.body.model).toBe(UPSTREAM_MODEL);
      expect(sent.body.system).toBe(SYSTEM);
      expect(sent.headers['x-api-key']).toBe('sk-upstream-secret');
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.headers['anthropic-version']).toBe(version);
      const requestId = response.headers.get('request-id');
      expect(requestId).toMatch(/^req_[0-9a-f]{24}$/);
      expect((await logOf(requestId))?.usage).toEqual({
        inputTokens: 25,
        outputTokens: 12,
        cachedInputTokens: 0,
        cacheWriteInputTokens: 0,
      });
    });

    it('keeps every field it does not handle when forwarding (rule S2)', async () => {
      upstream.on('/v1/messages', () => ({
        json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'ok' }]),
      }));
      const params = {
        model: 'test-claude',
        max_tokens: 2048,
        system: [
          { type: 'text' as const, text: SYSTEM, cache_control: { type: 'ephemeral' as const } },
        ],
        messages: [{ role: 'user' as const, content: 'hi' }],
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'auto' as const, disable_parallel_tool_use: true },
        top_k: 5,
        stop_sequences: ['END'],
        metadata: { user_id: 'u-42' },
        service_tier: 'standard_only' as const,
      };
      // A field no SDK types know about must still reach the upstream.
      await client.messages.create({ ...params, vendor_extension: { nested: [1, 2] } } as never);
      expect(upstream.last().body).toEqual({
        ...params,
        model: UPSTREAM_MODEL,
        vendor_extension: { nested: [1, 2] },
      });
    });

    it('streams every event in order when iterated with stream: true', async () => {
      upstream.on('/v1/messages', () => ({
        sse: named(textEvents(UPSTREAM_MODEL, ['Hel', 'lo', '!'])),
      }));
      const stream = await client.messages.create({
        model: 'test-claude',
        max_tokens: 1024,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'message_start') {
          expect(event.message.model).toBe('test-claude');
        }
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          text += event.delta.text;
        }
      }
      expect(text).toBe('Hello!');
      expect(types).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(upstream.last().body.stream).toBe(true);
    });

    it('assembles thinking with its signature and a tool call with messages.stream(), then sends them back unmodified', async () => {
      upstream.on('/v1/messages', (r) =>
        r.body.messages.length === 1
          ? { sse: named(thinkingToolEvents(UPSTREAM_MODEL)) }
          : { json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: '18C in Paris.' }]) },
      );
      const base = {
        model: 'test-claude',
        max_tokens: 2048,
        system: SYSTEM,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
      };
      const question = { role: 'user' as const, content: 'Weather in Paris?' };
      const stream = client.messages.stream({ ...base, messages: [question] });
      const thinking: string[] = [];
      const signatures: string[] = [];
      stream.on('thinking', (delta) => thinking.push(delta));
      stream.on('signature', (signature) => signatures.push(signature));
      const first = await stream.finalMessage();

      expect(thinking).toEqual(['The user wants the weather.', ' I should call get_weather.']);
      expect(signatures).toEqual([SIGNATURE]);
      expect(first.model).toBe('test-claude');
      expect(first.stop_reason).toBe('tool_use');
      expect(first.usage.output_tokens).toBe(89);
      const [thought, , call] = first.content;
      expect(thought).toEqual({
        type: 'thinking',
        thinking: 'The user wants the weather. I should call get_weather.',
        signature: SIGNATURE,
      });
      expect(call).toMatchObject({
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835',
        name: 'get_weather',
        input: { city: 'Paris' },
      });

      const second = await client.messages.create({
        ...base,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835', content: '18C' },
            ],
          },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: '18C in Paris.' }]);
      const sent = upstream.last().body.messages;
      expect(sent[1].content[0]).toEqual(thought);
      expect(sent[1].content[2]).toEqual({
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835',
        name: 'get_weather',
        input: { city: 'Paris' },
      });
      expect(sent[2].content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835', content: '18C' },
      ]);
    });

    it('forwards anthropic-beta from client.beta.messages (0.x adds ?beta=true)', async () => {
      upstream.on('/v1/messages', () => ({
        json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'ok' }]),
      }));
      const message = await client.beta.messages.create({
        model: 'test-claude',
        max_tokens: 1024,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'hi' }],
        betas: ['interleaved-thinking-2025-05-14'],
      });
      expect(message.model).toBe('test-claude');
      const sent = upstream.last();
      expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
      expect(sent.headers['anthropic-version']).toBe(version);
    });

    it('counts tokens through Anthropic for an Anthropic-served model', async () => {
      upstream.on('/v1/messages/count_tokens', () => ({ json: { input_tokens: 2095 } }));
      const counted = await client.messages.countTokens({
        model: 'test-claude',
        system: SYSTEM,
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
      });
      expect(counted).toEqual({ input_tokens: 2095 });
      const sent = upstream.last();
      expect(sent.path).toBe('/v1/messages/count_tokens');
      expect(sent.body).toEqual({
        model: UPSTREAM_MODEL,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
      });
      expect(sent.headers['x-api-key']).toBe('sk-upstream-secret');
      expect(sent.headers['anthropic-version']).toBe(version);
    });

    it('estimates tokens with a tokenizer for a model not served by Anthropic', async () => {
      const small = await client.messages.countTokens({
        model: 'test-gpt',
        messages: [{ role: 'user', content: 'hello world' }],
      });
      // openai profile: o200k_base "hello", " world" (2) + 4 per message + 3 per request.
      expect(small).toEqual({ input_tokens: 9 });
      const larger = await client.messages.countTokens({
        model: 'test-gpt',
        system: SYSTEM,
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: 'hello world, what is the weather in Paris?' }],
      });
      expect(larger.input_tokens).toBeGreaterThan(20);
      expect(upstream.requests).toHaveLength(0);
    });

    it('lists and retrieves models with the client', async () => {
      const ids: string[] = [];
      for await (const model of client.models.list()) {
        expect(model.type).toBe('model');
        ids.push(model.id);
      }
      expect(ids).toEqual(expect.arrayContaining(['test-claude', 'local-echo-claude']));
      const one = await client.models.retrieve('test-claude');
      expect(one).toMatchObject({ id: 'test-claude', type: 'model' });
    });

    it('relays the first events at once and aborts the upstream when the client aborts', async () => {
      // The upstream sends a delta, then stays silent: only an unbuffered relay shows it.
      upstream.on('/v1/messages', () => ({
        sse: named(textEvents(UPSTREAM_MODEL, ['one', 'two']).slice(0, 4)),
        after: 'hold',
      }));
      const controller = new AbortController();
      const stream = await client.messages.create(
        {
          model: 'test-claude',
          max_tokens: 1024,
          system: SYSTEM,
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
        },
        { signal: controller.signal },
      );
      let seen = '';
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          seen = event.delta.text;
          controller.abort();
        }
      }
      expect(seen).toBe('one');
      await expect(
        Promise.race([upstream.last().ended, sleep(2000).then(() => 'still open')]),
      ).resolves.toBe('aborted');
    });

    it('reads usage with cache counters from message_start and message_delta for the log', async () => {
      upstream.on('/v1/messages', () => ({
        sse: named(
          textEvents(UPSTREAM_MODEL, ['a', 'b'], {
            input_tokens: 5,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 2000,
          }),
        ),
      }));
      const { data: stream, response } = await client.messages
        .create({
          model: 'test-claude',
          max_tokens: 1024,
          system: SYSTEM,
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
        })
        .withResponse();
      for await (const event of stream) {
        void event;
      }
      expect((await logOf(response.headers.get('request-id')))?.usage).toEqual({
        inputTokens: 2105,
        outputTokens: 12,
        cachedInputTokens: 2000,
        cacheWriteInputTokens: 100,
      });
    });

    const RECORDED = ['text', 'thinking', 'tool-use'].map(
      (name) => [name, recordedLines(`anthropic-messages/${name}.stream.jsonl`)] as const,
    );
    for (const [name, recorded] of RECORDED) {
      (recorded ? it : it.skip)(
        `assembles the recorded ${name} stream with messages.stream()`,
        async () => {
          const events = recorded as { type: string; [k: string]: any }[];
          upstream.on('/v1/messages', () => ({ sse: named(events) }));
          const final = await client.messages
            .stream({
              model: 'test-claude',
              max_tokens: 4096,
              system: SYSTEM,
              messages: [{ role: 'user', content: 'x' }],
            })
            .finalMessage();
          // What the recorded events add up to, block by block.
          const blocks: Record<string, any>[] = [];
          for (const e of events) {
            if (e.type === 'content_block_start') {
              blocks[e.index] = { ...e.content_block, json: '' };
            } else if (e.type === 'content_block_delta') {
              const b = blocks[e.index];
              const d = e.delta;
              b.text = d.type === 'text_delta' ? b.text + d.text : b.text;
              b.thinking = d.type === 'thinking_delta' ? b.thinking + d.thinking : b.thinking;
              b.signature = d.type === 'signature_delta' ? d.signature : b.signature;
              b.json += d.type === 'input_json_delta' ? d.partial_json : '';
            }
          }
          const expected = blocks.map(({ json, ...b }) =>
            b.type === 'tool_use' ? { ...b, input: JSON.parse(json as string) } : b,
          );
          expect(final.content).toEqual(expected);
          expect(final.model).toBe('test-claude');
          const delta = events.find((e) => e.type === 'message_delta')!;
          expect(final.stop_reason).toBe(delta.delta.stop_reason);
          expect(final.usage.output_tokens).toBe(delta.usage.output_tokens);
        },
      );
    }
  },
);

describe('POST /v1/messages on the wire', () => {
  const body = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    model: 'test-claude',
    max_tokens: 1024,
    system: SYSTEM,
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });

  const RECORDED = ['text', 'thinking', 'tool-use'].map(
    (name) => [name, recordedLines(`anthropic-messages/${name}.stream.jsonl`)] as const,
  );
  for (const [name, recorded] of RECORDED) {
    (recorded ? it : it.skip)(
      `relays the recorded ${name} stream intact, each event with its event line`,
      async () => {
        const events = recorded as { type: string }[];
        upstream.on('/v1/messages', () => ({ sse: named(events) }));
        const res = await post('/v1/messages', body({ stream: true }));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/event-stream');
        const relayed = sseEvents(await res.text());
        // Byte-for-byte the upstream's data, but for the catalog id in message_start.
        const expected = events.map((e) => ({
          event: e.type,
          data:
            e.type === 'message_start'
              ? JSON.stringify(e).replace(/"model":"[^"]*"/, '"model":"test-claude"')
              : JSON.stringify(e),
        }));
        expect(relayed).toEqual(expected);
        expect(relayed.some((e) => e.event === 'ping')).toBe(events.some((e) => e.type === 'ping'));
      },
    );
  }

  it('sends the raw body untouched when the upstream id equals the catalog id', async () => {
    upstream.on('/v1/messages', () => ({
      json: anthropicMessage('claude-same-id', [{ type: 'text', text: 'ok' }]),
    }));
    const raw =
      '{"model":"claude-same-id",  "max_tokens":5,"system":"s","messages":[{"role":"user","content":"\\u00e9"}]}';
    const res = await post('/v1/messages', raw);
    expect(res.status).toBe(200);
    expect(upstream.last().raw).toBe(raw);
  });

  it('returns the upstream bytes as they are when they already carry the catalog id', async () => {
    const answer = JSON.stringify(
      anthropicMessage('claude-same-id', [{ type: 'text', text: 'ok' }]),
      null,
      2,
    );
    upstream.on('/v1/messages', () => ({
      text: answer,
      status: 200,
      headers: { 'content-type': 'application/json' },
    }));
    const res = await post('/v1/messages', body({ model: 'claude-same-id' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.text()).toBe(answer);
  });

  it("falls back to the provider's anthropic-version when the client sends none", async () => {
    upstream.on('/v1/messages', () => ({
      json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'ok' }]),
    }));
    const res = await post('/v1/messages?beta=true', body());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(upstream.last().headers['anthropic-version']).toBe('2023-01-01');
    expect(upstream.last().headers['anthropic-beta']).toBeUndefined();
  });

  it('names unnamed upstream events after their type, since the SDKs drop unnamed ones', async () => {
    const events = textEvents(UPSTREAM_MODEL, ['x']);
    upstream.on('/v1/messages', () => ({ sse: events }));
    const res = await post('/v1/messages', body({ stream: true }));
    expect(sseEvents(await res.text()).map((e) => e.event)).toEqual(
      events.map((e) => (e as { type: string }).type),
    );
  });

  it('sends SSE keep-alive comments while the upstream is silent', async () => {
    const events = named(textEvents(UPSTREAM_MODEL, ['slow']));
    upstream.on('/v1/messages', () => ({ sse: events, intervalMs: 200 }));
    const res = await post('/v1/messages', body({ stream: true }));
    const text = await res.text();
    expect(text).toContain(': keepalive\n\n');
    expect(text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
  });
});
