import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { MessageStream as LegacyMessageStream } from 'anthropic-sdk-0x/lib/MessageStream';
import { ResponseAccumulator } from '../../core/accumulate';
import type { CanonicalEvent, CanonicalUsage } from '../../core/canonical';
import {
  MessagesEventEncoder,
  type MessagesStreamEvent,
  messageId,
  stopFields,
  toAnthropicMessage,
  toAnthropicUsage,
} from './messages.encoder';

const USAGE: CanonicalUsage = {
  inputTokens: 2100,
  outputTokens: 40,
  cachedInputTokens: 2000,
  cacheWriteInputTokens: 60,
  reasoningTokens: 12,
};

/** Reasoning (signature mid-block), text, then two tool calls: the richest stream. */
const STREAM: CanonicalEvent[] = [
  { type: 'message_start', id: 'abc123', model: 'upstream-model', created: 1, inputTokens: 2100 },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Let me' },
  { type: 'reasoning_signature', index: 0, signature: 'sig==' },
  { type: 'reasoning_delta', index: 0, text: ' think.' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Checking.' },
  { type: 'block_stop', index: 1 },
  {
    type: 'block_start',
    index: 2,
    block: { kind: 'tool_call', id: 'toolu_a', name: 'get_weather' },
  },
  { type: 'tool_arguments_delta', index: 2, json: '{"city":' },
  { type: 'tool_arguments_delta', index: 2, json: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'toolu_b', name: 'get_time' } },
  { type: 'tool_arguments_delta', index: 3, json: '{}' },
  { type: 'block_stop', index: 3 },
  { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE },
];

function encodeAll(events: CanonicalEvent[], model = 'public-model'): MessagesStreamEvent[] {
  const encoder = new MessagesEventEncoder(model);
  return events.flatMap((e) => encoder.encode(e));
}

/** The events as the SDKs' `Stream.toReadableStream` would hand them to fromReadableStream. */
function readable(events: MessagesStreamEvent[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const e of events) {
        controller.enqueue(encoder.encode(`${JSON.stringify(e)}\n`));
      }
      controller.close();
    },
  });
}

describe('MessagesEventEncoder', () => {
  it('encodes reasoning, text and two tool calls in the Messages event grammar (golden)', () => {
    const delta = (index: number, d: object) => ({ type: 'content_block_delta', index, delta: d });
    expect(encodeAll(STREAM)).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_abc123',
          type: 'message',
          role: 'assistant',
          model: 'public-model',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 2100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 0,
          },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      delta(0, { type: 'thinking_delta', thinking: 'Let me' }),
      delta(0, { type: 'thinking_delta', thinking: ' think.' }),
      // Held back to just before its block stops, as Anthropic sends it.
      delta(0, { type: 'signature_delta', signature: 'sig==' }),
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      delta(1, { type: 'text_delta', text: 'Checking.' }),
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} },
      },
      delta(2, { type: 'input_json_delta', partial_json: '{"city":' }),
      delta(2, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_time', input: {} },
      },
      delta(3, { type: 'input_json_delta', partial_json: '{}' }),
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: 40,
          cache_creation_input_tokens: 60,
          cache_read_input_tokens: 2000,
          output_tokens: 40,
        },
      },
      { type: 'message_stop' },
    ]);
  });

  it('numbers blocks 0, 1, 2... in start order whatever the source indexes', () => {
    const events = encodeAll([
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'block_start', index: 5, block: { kind: 'text' } },
      { type: 'text_delta', index: 5, text: 'a' },
      { type: 'block_stop', index: 5 },
      { type: 'block_start', index: 9, block: { kind: 'text' } },
      { type: 'text_delta', index: 9, text: 'b' },
      { type: 'block_stop', index: 9 },
      { type: 'message_stop', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    expect(events.filter((e) => 'index' in e).map((e) => (e as { index: number }).index)).toEqual([
      0, 0, 0, 1, 1, 1,
    ]);
  });

  it.each([
    ['1.x', MessageStream],
    ['0.x', LegacyMessageStream as unknown as typeof MessageStream],
  ])(
    'satisfies the %s SDK MessageStream, which rebuilds the whole message',
    async (_line, Stream) => {
      const final = await Stream.fromReadableStream(readable(encodeAll(STREAM))).finalMessage();
      expect(final.content).toEqual([
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_b', name: 'get_time', input: {} },
      ]);
      expect(final.stop_reason).toBe('tool_use');
      expect(final.usage).toMatchObject({
        input_tokens: 40,
        output_tokens: 40,
        cache_read_input_tokens: 2000,
      });
    },
  );
});

describe('stop reasons and usage', () => {
  it.each([
    ['stop', undefined, 'end_turn', null],
    ['stop', 'END', 'stop_sequence', 'END'],
    ['length', undefined, 'max_tokens', null],
    ['length', 'END', 'max_tokens', null],
    ['tool_calls', undefined, 'tool_use', null],
    ['content_filter', undefined, 'refusal', null],
    ['refusal', undefined, 'refusal', null],
    ['pause', undefined, 'pause_turn', null],
  ] as const)('maps %s (stop sequence %s) to %s', (finish, sequence, reason, matched) => {
    expect(stopFields(finish, sequence)).toEqual({ stop_reason: reason, stop_sequence: matched });
  });

  it('reports input without the cached tokens, which Anthropic counts apart', () => {
    expect(toAnthropicUsage(USAGE)).toEqual({
      input_tokens: 40,
      cache_creation_input_tokens: 60,
      cache_read_input_tokens: 2000,
      output_tokens: 40,
    });
    expect(toAnthropicUsage({ inputTokens: 3, outputTokens: 1 })).toEqual({
      input_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 1,
    });
  });

  it('prefixes ids with msg_ once', () => {
    expect(messageId('abc')).toBe('msg_abc');
    expect(messageId('msg_abc')).toBe('msg_abc');
  });
});

describe('toAnthropicMessage', () => {
  function accumulate(events: CanonicalEvent[]) {
    const acc = new ResponseAccumulator();
    events.forEach((e) => acc.push(e));
    return acc.result();
  }

  it('builds the message object from the accumulated stream (golden)', () => {
    expect(toAnthropicMessage(accumulate(STREAM), 'public-model')).toEqual({
      id: 'msg_abc123',
      type: 'message',
      role: 'assistant',
      model: 'public-model',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_b', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 40,
        cache_creation_input_tokens: 60,
        cache_read_input_tokens: 2000,
        output_tokens: 40,
      },
    });
  });

  it('omits citations on text blocks, as Anthropic does when there are none', () => {
    const message = toAnthropicMessage(accumulate(STREAM), 'public-model');
    const text = message.content.find((b) => b.type === 'text');
    expect(text).toBeDefined();
    expect(Object.keys(text!)).toEqual(['type', 'text']);
  });

  it('drops a redacted reasoning block that carries no data, as the stream does', () => {
    const message = toAnthropicMessage(
      accumulate([
        { type: 'message_start', id: 'x', model: 'm', created: 1 },
        { type: 'block_start', index: 0, block: { kind: 'reasoning', redacted: true } },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'reasoning', redacted: true } },
        { type: 'reasoning_encrypted', index: 1, data: 'opaque' },
        { type: 'block_stop', index: 1 },
        { type: 'message_stop', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
      ]),
      'm',
    );
    expect(message.content).toEqual([{ type: 'redacted_thinking', data: 'opaque' }]);
  });

  it('names the stop sequence that ended the answer', () => {
    const message = toAnthropicMessage(
      accumulate([
        { type: 'message_start', id: 'x', model: 'm', created: 1 },
        {
          type: 'message_stop',
          finishReason: 'stop',
          stopSequence: '###',
          usage: { inputTokens: 1, outputTokens: 0 },
        },
      ]),
      'm',
    );
    expect(message).toMatchObject({
      content: [],
      stop_reason: 'stop_sequence',
      stop_sequence: '###',
    });
  });

  it('gives a tool call cut off by max_tokens an empty input rather than failing', () => {
    const message = toAnthropicMessage(
      accumulate([
        { type: 'message_start', id: 'x', model: 'm', created: 1 },
        { type: 'block_start', index: 0, block: { kind: 'tool_call', id: 't', name: 'f' } },
        { type: 'tool_arguments_delta', index: 0, json: '{"city": "Pa' },
        { type: 'block_stop', index: 0 },
        {
          type: 'message_stop',
          finishReason: 'length',
          usage: { inputTokens: 1, outputTokens: 1 },
        },
      ]),
      'm',
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 't', name: 'f', input: {} }]);
    expect(message.stop_reason).toBe('max_tokens');
  });
});
