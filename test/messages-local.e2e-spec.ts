import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_SDKS, WEATHER_TOOL, messagesCatalog } from './support/anthropic-fixtures';
import { sseEvents } from './support/sse';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';

const SYSTEM = 'You are a test double.';
const MODEL = 'local-echo-claude';

/** The local model's signature over its thinking text (local-model.ts). */
const localSignature = (thinking: string): string =>
  createHash('sha256').update(`local-thinking:${thinking}`).digest('base64');

let gw: TestGateway;

beforeAll(async () => {
  // No upstream at all: the local provider needs no network.
  gw = await startGateway({
    CATALOG_PATH: messagesCatalog('http://127.0.0.1:9'),
    LOCAL_MODEL_TOKEN_DELAY_MS: '1',
  });
});
afterAll(() => gw.close());

describe.each(ANTHROPIC_SDKS)(
  'the embedded local model on /v1/messages with the Anthropic SDK $line',
  ({ Sdk }) => {
    let client: Anthropic;
    const base = { model: MODEL, max_tokens: 1024, system: SYSTEM };

    beforeAll(() => {
      client = new Sdk({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
    });

    it('echoes the last user message as a message object', async () => {
      const message = await client.messages.create({
        ...base,
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'x' },
          { role: 'user', content: [{ type: 'text', text: 'ping pong' }] },
        ],
      });
      expect(message).toEqual({
        id: expect.stringMatching(/^msg_[0-9a-f]{24}$/),
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text: 'Echo: ping pong' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: expect.any(Number),
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 3,
        },
      });
      expect(message.usage.input_tokens).toBeGreaterThan(0);
    });

    it('streams the exact Messages event sequence when iterated', async () => {
      const stream = await client.messages.create({
        ...base,
        stream: true,
        messages: [{ role: 'user', content: 'one two' }],
      });
      const events: string[] = [];
      for await (const event of stream) {
        events.push(
          event.type === 'content_block_delta'
            ? `${event.type}:${event.index}:${event.delta.type}`
            : event.type === 'content_block_start'
              ? `${event.type}:${event.index}:${event.content_block.type}`
              : event.type,
        );
        if (event.type === 'message_delta') {
          expect(event.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
          expect(event.usage.output_tokens).toBe(3);
        }
      }
      expect(events).toEqual([
        'message_start',
        'content_block_start:0:text',
        'content_block_delta:0:text_delta',
        'content_block_delta:0:text_delta',
        'content_block_delta:0:text_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
    });

    it('streams thinking with its deterministic signature before the answer with messages.stream()', async () => {
      const stream = client.messages.stream({
        ...base,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'think first' }],
      });
      const thinking: string[] = [];
      const signatures: string[] = [];
      const text: string[] = [];
      stream.on('thinking', (delta) => thinking.push(delta));
      stream.on('signature', (signature) => signatures.push(signature));
      stream.on('text', (delta) => text.push(delta));
      const final = await stream.finalMessage();
      const [thought, answer] = final.content;
      expect(thought.type).toBe('thinking');
      const thoughtText = thought.type === 'thinking' ? thought.thinking : '';
      expect(thoughtText).toMatch(/^The user sent a message of 2 words\./);
      expect(thinking.join('')).toBe(thoughtText);
      expect(thinking.length).toBeGreaterThan(3);
      expect(signatures).toEqual([localSignature(thoughtText)]);
      expect(thought).toEqual({
        type: 'thinking',
        thinking: thoughtText,
        signature: signatures[0],
      });
      expect(answer).toEqual({ type: 'text', text: 'Echo: think first' });
      expect(text.join('')).toBe('Echo: think first');
      expect(final.usage.output_tokens).toBe(thinking.length + text.length);
    });

    it('thinks less or more with adaptive thinking and output_config.effort', async () => {
      const thoughtOf = async (effort?: 'low' | 'high'): Promise<string> => {
        const message = await client.messages.create({
          ...base,
          thinking: { type: 'adaptive' },
          ...(effort ? { output_config: { effort } } : {}),
          messages: [{ role: 'user', content: 'hmm' }],
        } as never);
        const block = (message as Anthropic.Message).content[0];
        return block.type === 'thinking' ? block.thinking : '';
      };
      const low = await thoughtOf('low');
      const medium = await thoughtOf();
      const high = await thoughtOf('high');
      expect(low.length).toBeGreaterThan(0);
      expect(medium.length).toBeGreaterThan(low.length);
      expect(high.length).toBeGreaterThan(medium.length);
    });

    it('calls a tool the user names, then answers its result on the next turn', async () => {
      const request = {
        ...base,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
      };
      const question = { role: 'user' as const, content: 'use get_weather with city=Paris' };
      const first = await client.messages
        .stream({ ...request, messages: [question] })
        .finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
      const call = first.content[1];
      expect(call).toMatchObject({
        type: 'tool_use',
        name: 'get_weather',
        input: { city: 'Paris', unit: 'celsius' },
      });
      const callId = call.type === 'tool_use' ? call.id : '';

      const second = await client.messages.create({
        ...request,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: callId, content: '18 degrees' }],
          },
        ],
      });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content.at(-1)).toEqual({
        type: 'text',
        text: 'Tool get_weather returned: 18 degrees',
      });
    });

    it('calls the tool that tool_choice forces', async () => {
      const message = await client.messages.create({
        ...base,
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'tool', name: 'get_weather' },
        messages: [{ role: 'user', content: 'city=Oslo' }],
      });
      expect(message.content).toEqual([
        {
          type: 'tool_use',
          id: expect.any(String),
          name: 'get_weather',
          input: { city: 'Oslo', unit: 'celsius' },
        },
      ]);
    });

    it('stops at max_tokens with stop_reason max_tokens', async () => {
      const message = await client.messages.create({
        ...base,
        max_tokens: 2,
        messages: [{ role: 'user', content: 'a b c d e f' }],
      });
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: a' }]);
      expect(message.stop_reason).toBe('max_tokens');
    });

    it('stops at a stop sequence and names it', async () => {
      const final = await client.messages
        .stream({
          ...base,
          stop_sequences: ['zzz', 'three'],
          messages: [{ role: 'user', content: 'one two three four' }],
        })
        .finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'Echo: one two ' }]);
      expect(final.stop_reason).toBe('stop_sequence');
      expect(final.stop_sequence).toBe('three');
    });

    it('estimates count_tokens with a tokenizer', async () => {
      const counted = await client.messages.countTokens({
        model: MODEL,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'hello world' }],
      });
      // anthropic profile: cl100k_base 6 + 2 tokens, x1.1 rounded up (9), + 3 per message
      // + 3 per request.
      expect(counted).toEqual({ input_tokens: 15 });
    });
  },
);

describe('the embedded local model on the wire', () => {
  it('answers a curl-style streaming request with thinking, each event named', async () => {
    const res = await fetch(`${gw.origin}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': TEST_KEY,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 1024,
        stream: true,
        system: SYSTEM,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await res.text());
    for (const e of events) {
      expect((JSON.parse(e.data) as { type: string }).type).toBe(e.event);
    }
    const start = JSON.parse(events[0].data) as Record<string, any>;
    expect(start.message).toMatchObject({ model: MODEL, content: [], stop_reason: null });
    expect(JSON.parse(events[1].data)).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    // The signature comes last in its block, right before content_block_stop.
    const stop = events.findIndex((e) => e.event === 'content_block_stop');
    expect(JSON.parse(events[stop - 1].data)).toMatchObject({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta' },
    });
    expect(events.at(-1)).toEqual({ event: 'message_stop', data: '{"type":"message_stop"}' });
  });
});
