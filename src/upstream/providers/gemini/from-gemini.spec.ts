import { GatewayError } from '../../../common/errors/gateway-errors';
import { GeminiStreamDecoder, fromGeminiResponse, missingFromGeminiAnswer } from './from-gemini';

const USAGE = {
  promptTokenCount: 12,
  candidatesTokenCount: 7,
  thoughtsTokenCount: 5,
  cachedContentTokenCount: 4,
  totalTokenCount: 24,
};

/** A streamed answer as the Gemini API sends it with `includeThoughts` (alt=sse chunks). */
const CHUNKS = [
  {
    candidates: [
      { content: { role: 'model', parts: [{ text: 'Thinking about', thought: true }] }, index: 0 },
    ],
    usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  },
  {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            { text: ' the weather.', thought: true },
            {
              functionCall: { name: 'get_weather', args: { city: 'Paris' } },
              thoughtSignature: 'c2ln',
            },
          ],
        },
        index: 0,
      },
    ],
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  },
  {
    candidates: [
      { content: { role: 'model', parts: [{ text: 'Calling.' }] }, finishReason: 'STOP', index: 0 },
    ],
    usageMetadata: USAGE,
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  },
];

function decode(chunks: object[]) {
  const decoder = new GeminiStreamDecoder();
  return [...chunks.flatMap((c) => decoder.push(c as Record<string, unknown>)), ...decoder.end()];
}

describe('GeminiStreamDecoder', () => {
  it('turns thoughts, a signed function call, text and usage into canonical events (golden)', () => {
    const events = decode(CHUNKS);
    const callId = (events[6] as { block: { id: string } }).block.id;
    expect(callId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(events).toEqual([
      {
        type: 'message_start',
        id: 'resp-1',
        model: 'gemini-2.5-flash',
        created: expect.any(Number),
        inputTokens: 12,
      },
      { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
      { type: 'reasoning_delta', index: 0, text: 'Thinking about' },
      { type: 'reasoning_delta', index: 0, text: ' the weather.' },
      { type: 'reasoning_signature', index: 0, signature: 'gwgem1.c2ln' },
      { type: 'block_stop', index: 0 },
      {
        type: 'block_start',
        index: 1,
        block: { kind: 'tool_call', id: callId, name: 'get_weather' },
      },
      { type: 'tool_arguments_delta', index: 1, json: '{"city":"Paris"}' },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'text' } },
      { type: 'text_delta', index: 2, text: 'Calling.' },
      { type: 'block_stop', index: 2 },
      {
        type: 'message_stop',
        finishReason: 'tool_calls',
        usage: { inputTokens: 12, outputTokens: 12, cachedInputTokens: 4, reasoningTokens: 5 },
      },
    ]);
  });

  it.each(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'])(
    'maps finish reason %s to content_filter',
    (reason) => {
      const events = decode([{ candidates: [{ content: { parts: [] }, finishReason: reason }] }]);
      expect(events.at(-1)).toMatchObject({ type: 'message_stop', finishReason: 'content_filter' });
    },
  );

  it('maps MAX_TOKENS to length, and a blocked prompt to content_filter', () => {
    expect(
      decode([
        { candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'MAX_TOKENS' }] },
      ]).at(-1),
    ).toMatchObject({ finishReason: 'length' });
    expect(decode([{ promptFeedback: { blockReason: 'SAFETY' } }]).at(-1)).toMatchObject({
      finishReason: 'content_filter',
    });
  });

  it('fails a stream cut before its finish reason', () => {
    expect(() => decode(CHUNKS.slice(0, 2))).toThrow(/ended before the message completed/);
  });

  it('turns an in-stream error into a typed error with its status class', () => {
    const decoder = new GeminiStreamDecoder();
    let caught: unknown;
    try {
      decoder.push({
        error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' },
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ status: 429, message: 'Quota exceeded' });
  });
});

describe('fromGeminiResponse', () => {
  it('reads a non-streamed answer as one chunk', () => {
    const events = fromGeminiResponse({
      candidates: [{ content: { parts: [{ text: 'Hello.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 },
    });
    expect(events.slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Hello.' },
      { type: 'block_stop', index: 0 },
      {
        type: 'message_stop',
        finishReason: 'stop',
        usage: { inputTokens: 3, outputTokens: 2, cachedInputTokens: 0, reasoningTokens: 0 },
      },
    ]);
  });

  it('checks that a body is a generateContent answer', () => {
    expect(missingFromGeminiAnswer({})).toBe('a generateContent answer without candidates');
    expect(missingFromGeminiAnswer({ candidates: [] })).toBeUndefined();
  });
});
