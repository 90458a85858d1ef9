import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResponseAccumulator } from '../../../core/accumulate';
import type { CanonicalEvent } from '../../../core/canonical';
import { ChatChunkEncoder } from '../../../formats/chat-completions/chat.encoder';
import { ResponsesStreamEncoder } from '../../../formats/responses/responses.encoder';
import { AnthropicStreamDecoder, fromAnthropicMessage } from './from-anthropic';

const RECORDED = join(__dirname, '..', '..', '..', '..', '..', 'shared', 'fixtures', 'recorded');
const lines = (file: string): Record<string, unknown>[] | undefined => {
  const path = join(RECORDED, file);
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : undefined;
};
const json = (file: string): Record<string, unknown> | undefined => {
  const path = join(RECORDED, file);
  return existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)
    : undefined;
};
const itRecorded = existsSync(RECORDED) ? it : it.skip;

const decodeAll = (events: Record<string, unknown>[]): CanonicalEvent[] => {
  const decoder = new AnthropicStreamDecoder(() => 1_700_000_000);
  return [...events.flatMap((e) => decoder.push(e)), ...decoder.end()];
};
const total = (events: CanonicalEvent[]) => {
  const acc = new ResponseAccumulator();
  events.forEach((e) => acc.push(e));
  return acc.result();
};

const delta = (index: number, d: object) => ({ type: 'content_block_delta', index, delta: d });

describe('AnthropicStreamDecoder', () => {
  it('decodes thinking with its signature, text and a tool call with split arguments (golden)', () => {
    const events = decodeAll([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          model: 'claude-x',
          content: [],
          usage: {
            input_tokens: 10,
            cache_read_input_tokens: 30,
            cache_creation_input_tokens: 5,
            output_tokens: 1,
          },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'ping' },
      delta(0, { type: 'thinking_delta', thinking: 'Plan.' }),
      delta(0, { type: 'signature_delta', signature: 'EqQB==' }),
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'redacted_thinking', data: 'opaque' },
      },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
      },
      delta(2, { type: 'input_json_delta', partial_json: '{"q":1}' }),
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'text', text: '' } },
      delta(3, { type: 'text_delta', text: 'Checking.' }),
      { type: 'content_block_stop', index: 3 },
      {
        type: 'content_block_start',
        index: 4,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
      },
      delta(4, { type: 'input_json_delta', partial_json: '' }),
      delta(4, { type: 'input_json_delta', partial_json: '{"city": "Pa' }),
      delta(4, { type: 'input_json_delta', partial_json: 'ris"}' }),
      { type: 'content_block_stop', index: 4 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 42 },
      },
      { type: 'message_stop' },
    ]);
    expect(events).toEqual([
      {
        type: 'message_start',
        id: 'msg_1',
        model: 'claude-x',
        created: 1_700_000_000,
        inputTokens: 45,
      },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Plan.' },
      { type: 'reasoning_signature', index: 0, signature: 'EqQB==' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'reasoning', redacted: true } },
      { type: 'reasoning_encrypted', index: 1, data: 'opaque' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'text' } },
      { type: 'text_delta', index: 2, text: 'Checking.' },
      { type: 'block_stop', index: 2 },
      {
        type: 'block_start',
        index: 3,
        block: { kind: 'tool_call', id: 'toolu_1', name: 'get_weather' },
      },
      { type: 'tool_arguments_delta', index: 3, json: '{"city": "Pa' },
      { type: 'tool_arguments_delta', index: 3, json: 'ris"}' },
      { type: 'block_stop', index: 3 },
      {
        type: 'message_stop',
        finishReason: 'tool_calls',
        // OpenAI convention: input includes cache reads and writes.
        usage: {
          inputTokens: 45,
          outputTokens: 42,
          cachedInputTokens: 30,
          cacheWriteInputTokens: 5,
        },
      },
    ]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'refusal'],
    ['pause_turn', 'pause'],
  ])('maps stop reason %s to finish reason %s', (stop, finish) => {
    const events = fromAnthropicMessage({
      id: 'm',
      model: 'c',
      content: [],
      stop_reason: stop,
      usage: {},
    });
    expect(events[events.length - 1]).toMatchObject({ finishReason: finish });
  });

  it('keeps the stop sequence that ended the answer', () => {
    const events = fromAnthropicMessage({
      id: 'm',
      model: 'c',
      content: [{ type: 'text', text: 'a' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(events[events.length - 1]).toMatchObject({ finishReason: 'stop', stopSequence: 'END' });
  });

  it('fails on an in-stream overloaded error as a 529, and on a stream cut before message_delta', () => {
    const decoder = new AnthropicStreamDecoder();
    expect(() =>
      decoder.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ).toThrow(expect.objectContaining({ status: 529, kind: 'overloaded' }));
    const cut = new AnthropicStreamDecoder();
    cut.push({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 1 } } });
    expect(() => cut.end()).toThrow(expect.objectContaining({ code: 'stream_incomplete' }));
  });

  it('turns a non-streamed message with thinking and a tool call into the same events as its stream', () => {
    const message = {
      id: 'msg_1',
      model: 'c',
      content: [
        { type: 'thinking', thinking: 'Plan.', signature: 'EqQB==' },
        { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3, output_tokens: 4 },
    };
    expect(total(fromAnthropicMessage(message))).toMatchObject({
      content: [
        { type: 'reasoning', text: 'Plan.', signature: 'EqQB==' },
        { type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });
});

describe('recorded Anthropic traffic through every client format', () => {
  itRecorded.each(['text', 'thinking'])(
    'decodes the recorded %s stream to the same answer and usage as the recorded message',
    (name) => {
      const streamed = total(decodeAll(lines(`anthropic-messages/${name}.stream.jsonl`)!));
      const whole = total(fromAnthropicMessage(json(`anthropic-messages/${name}.response.json`)!));
      expect(streamed.content.map((b) => b.type)).toEqual(whole.content.map((b) => b.type));
      expect(streamed.usage.inputTokens).toBe(whole.usage.inputTokens);
      expect(streamed.finishReason).toBe('stop');
      if (name === 'thinking') {
        expect(streamed.content[0]).toMatchObject({
          type: 'reasoning',
          signature: expect.stringMatching(/^E/),
        });
      }
    },
  );

  itRecorded.each(['text', 'thinking', 'tool-use'])(
    'encodes the recorded %s stream as chat chunks with usage equal to the upstream message_delta',
    (name) => {
      const recorded = lines(`anthropic-messages/${name}.stream.jsonl`)!;
      const events = decodeAll(recorded);
      const encoder = new ChatChunkEncoder('m', true);
      const chunks = events.flatMap((e) => encoder.encode(e));
      const usageChunk = chunks[chunks.length - 1];
      const last = recorded.find((e) => e.type === 'message_delta') as {
        usage: { output_tokens: number };
      };
      expect(usageChunk.choices).toEqual([]);
      expect(usageChunk.usage!.completion_tokens).toBe(last.usage.output_tokens);
      expect(chunks.filter((c) => c.choices[0]?.finish_reason).length).toBe(1);
      if (name === 'tool-use') {
        const args = chunks
          .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
          .map((t) => t.function.arguments);
        expect(JSON.parse(args.join(''))).toHaveProperty('elements');
        expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('tool_calls');
      }
    },
  );

  itRecorded.each(['text', 'thinking', 'tool-use'])(
    'encodes the recorded %s stream as Responses events ending in response.completed',
    (name) => {
      const encoder = new ResponsesStreamEncoder({
        model: 'm',
        request: { model: 'm', input: 'x', reasoning: { summary: 'auto' } },
      });
      const out = decodeAll(lines(`anthropic-messages/${name}.stream.jsonl`)!).flatMap((e) =>
        encoder.encode(e),
      );
      const terminal = out[out.length - 1];
      expect(terminal.type).toBe('response.completed');
      expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    },
  );
});
