import { from, throwError } from 'rxjs';
import { ResponseAccumulator, collectResponse, responseEvents } from './accumulate';
import type { CanonicalEvent } from './canonical';

function accumulate(events: CanonicalEvent[]): ResponseAccumulator {
  const acc = new ResponseAccumulator();
  for (const e of events) {
    acc.push(e);
  }
  return acc;
}

describe('ResponseAccumulator', () => {
  it('adds up reasoning, text and tool calls into the whole response', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'msg_1', model: 'm', created: 123, inputTokens: 9 },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Thinking' },
      { type: 'reasoning_delta', index: 0, text: ' hard.' },
      { type: 'reasoning_signature', index: 0, signature: 'sig-1' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Hello' },
      { type: 'text_delta', index: 1, text: ', world' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
      { type: 'tool_arguments_delta', index: 2, json: '{"a":' },
      { type: 'tool_arguments_delta', index: 2, json: '1}' },
      { type: 'block_stop', index: 2 },
      {
        type: 'message_stop',
        finishReason: 'tool_calls',
        usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 5 },
      },
    ]);
    expect(acc.result()).toEqual({
      id: 'msg_1',
      model: 'm',
      created: 123,
      content: [
        { type: 'reasoning', text: 'Thinking hard.', signature: 'sig-1' },
        { type: 'text', text: 'Hello, world' },
        { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 20, reasoningTokens: 5 },
    });
  });

  it('keeps interleaved deltas of parallel blocks apart', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'a', name: 'fa' } },
      { type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'b', name: 'fb' } },
      { type: 'tool_arguments_delta', index: 1, json: '{"b"' },
      { type: 'tool_arguments_delta', index: 0, json: '{"a"' },
      { type: 'tool_arguments_delta', index: 1, json: ':2}' },
      { type: 'tool_arguments_delta', index: 0, json: ':1}' },
    ]);
    expect(acc.result().content).toEqual([
      { type: 'tool_call', id: 'a', name: 'fa', arguments: '{"a":1}' },
      { type: 'tool_call', id: 'b', name: 'fb', arguments: '{"b":2}' },
    ]);
  });

  it('uses the start event input tokens and finish stop until message_stop arrives', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'x', model: 'm', created: 1, inputTokens: 42 },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'partial' },
    ]);
    expect(acc.result()).toMatchObject({
      finishReason: 'stop',
      usage: { inputTokens: 42, outputTokens: 0 },
      content: [{ type: 'text', text: 'partial' }],
    });
  });

  it('ignores deltas for blocks that were never started or of another kind', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'text_delta', index: 3, text: 'lost' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'tool_arguments_delta', index: 0, json: '{}' },
      { type: 'reasoning_signature', index: 0, signature: 's' },
      { type: 'text_delta', index: 0, text: 'kept' },
    ]);
    expect(acc.result().content).toEqual([{ type: 'text', text: 'kept' }]);
  });

  it('reports the finish reason of message_stop', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'message_stop', finishReason: 'length', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    expect(acc.result().finishReason).toBe('length');
    expect(acc.result().content).toEqual([]);
  });

  it('throws when the stream never started', () => {
    const acc = accumulate([
      { type: 'message_stop', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    expect(() => acc.result()).toThrow(/message_start/);
  });

  it('keeps the stop sequence that message_stop names', () => {
    const acc = accumulate([
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      {
        type: 'message_stop',
        finishReason: 'stop',
        stopSequence: 'END',
        usage: { inputTokens: 1, outputTokens: 2 },
      },
    ]);
    expect(acc.result()).toMatchObject({ finishReason: 'stop', stopSequence: 'END' });
  });
});

describe('collectResponse', () => {
  it('runs an event stream to its end and returns the whole response', async () => {
    const response = await collectResponse(
      from<CanonicalEvent[]>([
        { type: 'message_start', id: 'x', model: 'm', created: 1 },
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'hi' },
        { type: 'block_stop', index: 0 },
        { type: 'message_stop', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
      ]),
    );
    expect(response).toMatchObject({ id: 'x', content: [{ type: 'text', text: 'hi' }] });
    expect(response.usage).toEqual({ inputTokens: 1, outputTokens: 1 });
  });

  it('rejects with the error of a failing stream', async () => {
    await expect(collectResponse(throwError(() => new Error('boom')))).rejects.toThrow('boom');
  });
});

describe('responseEvents', () => {
  it('adds back up to the response it came from, every kind of block included', () => {
    const response = accumulate([
      { type: 'message_start', id: 'msg_1', model: 'm', created: 123, inputTokens: 9 },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Thinking' },
      { type: 'reasoning_signature', index: 0, signature: 'sig-1' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'reasoning', redacted: true } },
      { type: 'reasoning_encrypted', index: 1, data: 'opaque', itemId: 'rs_1' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'text' } },
      { type: 'text_delta', index: 2, text: 'Hello' },
      { type: 'block_stop', index: 2 },
      { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
      { type: 'tool_arguments_delta', index: 3, json: '{"a":1}' },
      { type: 'block_stop', index: 3 },
      { type: 'block_start', index: 4, block: { kind: 'text' } },
      { type: 'block_stop', index: 4 },
      {
        type: 'message_stop',
        finishReason: 'stop',
        stopSequence: 'END',
        usage: { inputTokens: 9, outputTokens: 4, reasoningTokens: 2 },
      },
    ]).result();
    const replayed = responseEvents(response);
    expect(replayed[0]).toMatchObject({ type: 'message_start', id: 'msg_1', inputTokens: 9 });
    expect(replayed.at(-1)).toEqual({
      type: 'message_stop',
      finishReason: 'stop',
      stopSequence: 'END',
      usage: { inputTokens: 9, outputTokens: 4, reasoningTokens: 2 },
    });
    // Empty blocks get no delta; every block is started and stopped once.
    expect(replayed.filter((e) => e.type === 'block_start')).toHaveLength(5);
    expect(replayed.filter((e) => e.type === 'block_stop')).toHaveLength(5);
    expect(replayed.some((e) => e.type === 'text_delta' && e.index === 4)).toBe(false);
    expect(accumulate(replayed).result()).toEqual(response);
  });
});
