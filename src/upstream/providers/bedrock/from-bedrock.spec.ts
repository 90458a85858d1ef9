import { GatewayError } from '../../../common/errors/gateway-errors';
import type { CanonicalEvent } from '../../../core/canonical';
import { bedrockError, exceptionName } from './bedrock-errors';
import {
  ConverseStreamDecoder,
  fromConverseResponse,
  missingFromConverseAnswer,
} from './from-bedrock';

const now = (): number => 1_760_000_000;
const id = (): string => 'msg_bdrk_1';
const USAGE = {
  inputTokens: 12,
  outputTokens: 30,
  totalTokens: 52,
  cacheReadInputTokens: 8,
  cacheWriteInputTokens: 2,
};

/** ConverseStream as Bedrock sends it for Claude with thinking and a tool call. */
const STREAM: [string, Record<string, unknown>][] = [
  ['messageStart', { role: 'assistant', p: 'abc' }],
  ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Think' } } }],
  ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'ing.' } } }],
  [
    'contentBlockDelta',
    { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'c2ln' } } },
  ],
  ['contentBlockStop', { contentBlockIndex: 0 }],
  ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Let me ' } }],
  ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'check.' } }],
  ['contentBlockStop', { contentBlockIndex: 1 }],
  [
    'contentBlockStart',
    { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu_1', name: 'get_weather' } } },
  ],
  ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }],
  ['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } }],
  ['contentBlockStop', { contentBlockIndex: 2 }],
  ['messageStop', { stopReason: 'tool_use' }],
  ['metadata', { usage: USAGE, metrics: { latencyMs: 300 } }],
];

const EVENTS: CanonicalEvent[] = [
  { type: 'message_start', id: 'msg_bdrk_1', model: '', created: 1_760_000_000 },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Think' },
  { type: 'reasoning_delta', index: 0, text: 'ing.' },
  { type: 'reasoning_signature', index: 0, signature: 'c2ln' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Let me ' },
  { type: 'text_delta', index: 1, text: 'check.' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'tu_1', name: 'get_weather' } },
  { type: 'tool_arguments_delta', index: 2, json: '{"city":' },
  { type: 'tool_arguments_delta', index: 2, json: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  {
    type: 'message_stop',
    finishReason: 'tool_calls',
    usage: { inputTokens: 22, outputTokens: 30, cachedInputTokens: 8, cacheWriteInputTokens: 2 },
  },
];

function decode(stream: [string, Record<string, unknown>][]): CanonicalEvent[] {
  const decoder = new ConverseStreamDecoder('aws', now, id);
  return [...stream.flatMap(([name, data]) => decoder.push(data, name)), ...decoder.end()];
}

describe('ConverseStreamDecoder', () => {
  it('decodes reasoning with its signature, text and a tool call, with cache usage (golden)', () => {
    expect(decode(STREAM)).toEqual(EVENTS);
  });

  it('decodes a redacted reasoning block and a stop sequence', () => {
    const events = decode([
      ['messageStart', { role: 'assistant' }],
      [
        'contentBlockDelta',
        { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'b3BhcXVl' } } },
      ],
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Done' } }],
      ['contentBlockStop', { contentBlockIndex: 1 }],
      [
        'messageStop',
        { stopReason: 'stop_sequence', additionalModelResponseFields: { stop_sequence: 'END' } },
      ],
      ['metadata', { usage: { inputTokens: 3, outputTokens: 1 } }],
    ]);
    expect(events.slice(1, 3)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'reasoning', redacted: true } },
      { type: 'reasoning_encrypted', index: 0, data: 'b3BhcXVl' },
    ]);
    expect(events[events.length - 1]).toMatchObject({
      finishReason: 'stop',
      stopSequence: 'END',
    });
  });

  it('maps guardrail and length stops', () => {
    const stop = (reason: string): CanonicalEvent =>
      decode([
        ['messageStart', {}],
        ['messageStop', { stopReason: reason }],
        ['metadata', { usage: {} }],
      ]).pop()!;
    expect(stop('guardrail_intervened')).toMatchObject({ finishReason: 'content_filter' });
    expect(stop('max_tokens')).toMatchObject({ finishReason: 'length' });
    expect(stop('model_context_window_exceeded')).toMatchObject({ finishReason: 'length' });
  });

  it('fails a stream cut before messageStop, and ends one cut after it', () => {
    expect(() => decode(STREAM.slice(0, 6))).toThrow(GatewayError);
    const withoutUsage = decode(STREAM.slice(0, 13));
    expect(withoutUsage[withoutUsage.length - 1]).toMatchObject({
      type: 'message_stop',
      finishReason: 'tool_calls',
    });
  });

  it('raises an in-stream exception with the status its type says', () => {
    const decoder = new ConverseStreamDecoder('aws', now, id);
    const raise = (type: string): unknown => {
      try {
        decoder.push({ type: 'error', error: { type, message: 'said' } });
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(raise('throttlingException')).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
    });
    expect(raise('serviceUnavailableException')).toMatchObject({ status: 503 });
    expect(raise('validationException')).toMatchObject({ status: 400 });
    expect(raise('modelStreamErrorException')).toMatchObject({
      status: 502,
      code: 'upstream_error',
    });
    expect(raise('internalServerException')).toMatchObject({ status: 502 });
  });
});

describe('fromConverseResponse', () => {
  it('gives the same events as the stream of the same answer (golden)', () => {
    const answer = {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Thinking.', signature: 'c2ln' } } },
            { text: 'Let me check.' },
            { toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: USAGE,
    };
    expect(missingFromConverseAnswer(answer)).toBeUndefined();
    expect(fromConverseResponse(answer, 'aws', now, id)).toEqual([
      EVENTS[0],
      EVENTS[1],
      { type: 'reasoning_delta', index: 0, text: 'Thinking.' },
      EVENTS[4],
      EVENTS[5],
      EVENTS[6],
      { type: 'text_delta', index: 1, text: 'Let me check.' },
      EVENTS[9],
      EVENTS[10],
      { type: 'tool_arguments_delta', index: 2, json: '{"city":"Paris"}' },
      EVENTS[13],
      EVENTS[14],
    ]);
  });

  it('refuses a body that is not a Converse answer', () => {
    expect(missingFromConverseAnswer({ message: 'hi' })).toMatch(/without output/);
  });
});

describe('bedrockError', () => {
  it('reads the exception name however the service spells it', () => {
    expect(exceptionName('ThrottlingException:http://internal.amazon.com/coral/x/')).toBe(
      'throttling',
    );
    expect(exceptionName('com.amazon.coral#ModelNotReadyException')).toBe('modelnotready');
    expect(exceptionName('modelStreamErrorException')).toBe('modelstreamerror');
  });

  it('gives each exception its status and code (retried: 429, 503, 504, 502)', () => {
    const of = (type: string, status?: number): GatewayError =>
      bedrockError(type, 'said', 'aws', status);
    expect(of('ValidationException', 400)).toMatchObject({ status: 400, code: null });
    expect(of('ValidationException', 400)).toMatchObject({ message: 'said' });
    expect(
      bedrockError('ValidationException', 'Input is too long for requested model.', 'aws', 400),
    ).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(of('ThrottlingException', 429)).toMatchObject({ status: 429 });
    expect(of('ServiceQuotaExceededException', 400)).toMatchObject({ status: 429 });
    expect(of('ModelNotReadyException', 429)).toMatchObject({
      status: 503,
      code: 'model_not_ready',
    });
    expect(of('ServiceUnavailableException', 503)).toMatchObject({ status: 503 });
    expect(of('ModelTimeoutException', 408)).toMatchObject({ status: 504 });
    expect(of('ResourceNotFoundException', 404)).toMatchObject({ status: 404 });
    expect(of('ModelErrorException', 424)).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(of('InternalServerException', 500)).toMatchObject({ status: 502 });
  });

  it('treats a refused identity as the gateway credentials failing, without the message', () => {
    for (const type of [
      'AccessDeniedException',
      'UnrecognizedClientException',
      'ExpiredTokenException',
    ]) {
      const error = bedrockError(type, 'arn:aws:sts::1:assumed-role/x token=IQoJ', 'aws', 403);
      expect(error).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
      expect(error.message).not.toMatch(/arn:aws|IQoJ/);
    }
  });
});
