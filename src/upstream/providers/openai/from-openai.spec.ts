import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResponseAccumulator } from '../../../core/accumulate';
import type { CanonicalEvent } from '../../../core/canonical';
import { MessagesEventEncoder } from '../../../formats/messages/messages.encoder';
import { ChatStreamDecoder, fromChatCompletion } from './from-openai-chat';
import { ResponsesStreamDecoder, fromResponseObject } from './from-openai-responses';

const RECORDED = join(__dirname, '..', '..', '..', '..', '..', 'shared', 'fixtures', 'recorded');
const read = (file: string): string | undefined => {
  const path = join(RECORDED, file);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
};
const lines = (file: string): Record<string, unknown>[] =>
  read(file)!
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const itRecorded = existsSync(RECORDED) ? it : it.skip;

type Decoder = { push(e: Record<string, unknown>): CanonicalEvent[]; end(): CanonicalEvent[] };
const decodeAll = (decoder: Decoder, events: Record<string, unknown>[]): CanonicalEvent[] => [
  ...events.flatMap((e) => decoder.push(e)),
  ...decoder.end(),
];
const total = (events: CanonicalEvent[]) => {
  const acc = new ResponseAccumulator();
  events.forEach((e) => acc.push(e));
  return acc.result();
};
const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: 'chatcmpl-1',
  model: 'gpt-x',
  created: 1_700_000_000,
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

describe('ChatStreamDecoder', () => {
  it('decodes reasoning_content, text and two tool calls by index, with usage from the last chunk (golden)', () => {
    const events = decodeAll(new ChatStreamDecoder(), [
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'Think.' }),
      chunk({ content: 'Checking.' }),
      chunk({
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'a', arguments: '' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
      {
        id: 'chatcmpl-1',
        choices: [],
        usage: {
          prompt_tokens: 50,
          completion_tokens: 20,
          prompt_tokens_details: { cached_tokens: 10 },
          completion_tokens_details: { reasoning_tokens: 5 },
        },
      },
    ]);
    expect(events).toEqual([
      { type: 'message_start', id: 'chatcmpl-1', model: 'gpt-x', created: 1_700_000_000 },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Think.' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Checking.' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_1', name: 'a' } },
      { type: 'tool_arguments_delta', index: 2, json: '{"x":' },
      { type: 'tool_arguments_delta', index: 2, json: '1}' },
      { type: 'block_stop', index: 2 },
      { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_2', name: 'b' } },
      { type: 'tool_arguments_delta', index: 3, json: '{}' },
      { type: 'block_stop', index: 3 },
      {
        type: 'message_stop',
        finishReason: 'tool_calls',
        usage: { inputTokens: 50, outputTokens: 20, cachedInputTokens: 10, reasoningTokens: 5 },
      },
    ]);
  });

  it('fails a stream cut before its finish reason, and an in-stream error', () => {
    const cut = new ChatStreamDecoder();
    cut.push(chunk({ content: 'a' }));
    expect(() => cut.end()).toThrow(expect.objectContaining({ code: 'stream_incomplete' }));
    expect(() =>
      new ChatStreamDecoder().push({ error: { message: 'boom', type: 'server_error' } }),
    ).toThrow('boom');
  });

  itRecorded(
    'decodes the recorded chat stream to the recorded usage, and re-encodes it as a valid Messages stream',
    () => {
      const recorded = lines('openai-chat/text.stream.jsonl');
      const events = decodeAll(new ChatStreamDecoder(), recorded);
      const usage = recorded.find((c) => c.usage) as {
        usage: { prompt_tokens: number; completion_tokens: number };
      };
      const result = total(events);
      expect(result.usage).toMatchObject({
        inputTokens: usage.usage.prompt_tokens,
        outputTokens: usage.usage.completion_tokens,
      });
      const encoder = new MessagesEventEncoder('m');
      const wire = events.flatMap((e) => encoder.encode(e));
      expect(wire[0].type).toBe('message_start');
      expect(wire.slice(-2).map((e) => e.type)).toEqual(['message_delta', 'message_stop']);
      const whole = JSON.parse(read('openai-chat/text.response.json')!) as Record<string, unknown>;
      expect(total(fromChatCompletion(whole)).content[0].type).toBe('text');
    },
  );
});

describe('ResponsesStreamDecoder', () => {
  const added = (i: number, item: object) => ({
    type: 'response.output_item.added',
    output_index: i,
    item,
  });
  const done = (i: number, item: object) => ({
    type: 'response.output_item.done',
    output_index: i,
    item,
  });

  it('decodes summaries (joined), encrypted reasoning with its id, text and a function call (golden)', () => {
    const events = decodeAll(new ResponsesStreamDecoder(), [
      {
        type: 'response.created',
        response: { id: 'resp_1', model: 'gpt-5', created_at: 1_700_000_000 },
      },
      added(0, { id: 'rs_1', type: 'reasoning', summary: [] }),
      { type: 'response.reasoning_summary_part.added', output_index: 0, summary_index: 0 },
      {
        type: 'response.reasoning_summary_text.delta',
        output_index: 0,
        summary_index: 0,
        delta: 'A',
      },
      { type: 'response.reasoning_summary_part.added', output_index: 0, summary_index: 1 },
      {
        type: 'response.reasoning_summary_text.delta',
        output_index: 0,
        summary_index: 1,
        delta: 'B',
      },
      done(0, { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAAA' }),
      added(1, { id: 'msg_1', type: 'message', content: [] }),
      { type: 'response.output_text.delta', output_index: 1, delta: 'Hi' },
      done(1, { id: 'msg_1', type: 'message' }),
      added(2, { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' }),
      { type: 'response.function_call_arguments.delta', output_index: 2, delta: '{}' },
      done(2, { id: 'fc_1', type: 'function_call' }),
      {
        type: 'response.completed',
        response: {
          status: 'completed',
          usage: {
            input_tokens: 84,
            input_tokens_details: { cached_tokens: 16 },
            output_tokens: 94,
            output_tokens_details: { reasoning_tokens: 64 },
          },
        },
      },
    ]);
    expect(events).toEqual([
      { type: 'message_start', id: 'resp_1', model: 'gpt-5', created: 1_700_000_000 },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'A' },
      { type: 'reasoning_delta', index: 0, text: '\n\n' },
      { type: 'reasoning_delta', index: 0, text: 'B' },
      { type: 'reasoning_encrypted', index: 0, data: 'gAAAA', itemId: 'rs_1' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
      { type: 'tool_arguments_delta', index: 2, json: '{}' },
      { type: 'block_stop', index: 2 },
      {
        type: 'message_stop',
        finishReason: 'tool_calls',
        usage: { inputTokens: 84, outputTokens: 94, cachedInputTokens: 16, reasoningTokens: 64 },
      },
    ]);
  });

  it('maps response.incomplete to length, and a non-streamed response to the same answer', () => {
    const incomplete = decodeAll(new ResponsesStreamDecoder(), [
      {
        type: 'response.incomplete',
        response: {
          id: 'r',
          status: 'incomplete',
          incomplete_details: { reason: 'max_output_tokens' },
          usage: {},
        },
      },
    ]);
    expect(incomplete[incomplete.length - 1]).toMatchObject({ finishReason: 'length' });
    const whole = total(
      fromResponseObject({
        id: 'r',
        status: 'completed',
        output: [
          {
            id: 'rs_1',
            type: 'reasoning',
            summary: [{ type: 'summary_text', text: 'S' }],
            encrypted_content: 'E',
          },
          { id: 'm', type: 'message', content: [{ type: 'output_text', text: 'T' }] },
        ],
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    );
    expect(whole.content).toEqual([
      { type: 'reasoning', text: 'S', encrypted: 'E', itemId: 'rs_1' },
      { type: 'text', text: 'T' },
    ]);
  });

  itRecorded(
    'decodes the recorded multi-summary reasoning stream and shows it as thinking with usage kept',
    () => {
      const recorded = lines('openai-responses/reasoning-multi-summary.stream.jsonl');
      const events = decodeAll(new ResponsesStreamDecoder(), recorded);
      const completed = recorded.find((e) => e.type === 'response.completed') as {
        response: {
          usage: { input_tokens: number; output_tokens: number };
          output: { summary?: { text: string }[] }[];
        };
      };
      const result = total(events);
      const summaries = completed.response.output[0].summary!.map((s) => s.text);
      expect(result.content[0]).toMatchObject({ type: 'reasoning', text: summaries.join('\n\n') });
      expect(result.usage).toMatchObject({
        inputTokens: completed.response.usage.input_tokens,
        outputTokens: completed.response.usage.output_tokens,
      });
      const encoder = new MessagesEventEncoder('m');
      const wire = events.flatMap((e) => encoder.encode(e));
      expect(
        wire
          .filter((e) => e.type === 'content_block_start')
          .map((e) => (e as { content_block: { type: string } }).content_block.type),
      ).toEqual(['thinking', 'text']);
    },
  );

  itRecorded('fails the recorded error stream with a 429 for insufficient_quota', () => {
    const decoder = new ResponsesStreamDecoder();
    expect(() =>
      lines('openai-responses/error.stream.jsonl').forEach((e) => decoder.push(e)),
    ).toThrow(expect.objectContaining({ status: 429, code: 'insufficient_quota' }));
  });
});
