import type { CanonicalEvent, CanonicalResponse, CanonicalUsage } from '../../core/canonical';
import { ChatChunkEncoder, chatCompletionId, toChatCompletion, toChatUsage } from './chat.encoder';

const USAGE: CanonicalUsage = {
  inputTokens: 100,
  outputTokens: 40,
  cachedInputTokens: 60,
  reasoningTokens: 12,
};

/** Reasoning, text, then two tool calls: the richest stream a chat client may see. */
const STREAM: CanonicalEvent[] = [
  { type: 'message_start', id: 'abc123', model: 'upstream-model-2025', created: 1_700_000_000 },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Let me think.' },
  { type: 'reasoning_signature', index: 0, signature: 'sig' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Checking' },
  { type: 'text_delta', index: 1, text: ' both.' },
  { type: 'block_stop', index: 1 },
  {
    type: 'block_start',
    index: 2,
    block: { kind: 'tool_call', id: 'call_a', name: 'get_weather' },
  },
  { type: 'tool_arguments_delta', index: 2, json: '{"city":' },
  { type: 'tool_arguments_delta', index: 2, json: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'call_b', name: 'get_time' } },
  { type: 'tool_arguments_delta', index: 3, json: '{}' },
  { type: 'block_stop', index: 3 },
  { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE },
];

function encodeAll(encoder: ChatChunkEncoder, events: CanonicalEvent[]) {
  return events.flatMap((e) => encoder.encode(e));
}

describe('ChatChunkEncoder', () => {
  it('encodes reasoning, text and two tool calls in the chat chunk grammar (golden)', () => {
    const chunks = encodeAll(new ChatChunkEncoder('public-model', false), STREAM);
    const base = {
      id: 'chatcmpl-abc123',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'public-model',
    };
    const choice = (delta: object, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    expect(chunks).toEqual([
      choice({ role: 'assistant', content: '' }),
      choice({ reasoning_content: 'Let me think.' }),
      // The signed block, whole, once it ends: what a second turn sends back.
      choice({
        thinking_blocks: [{ type: 'thinking', thinking: 'Let me think.', signature: 'sig' }],
      }),
      choice({ content: 'Checking' }),
      choice({ content: ' both.' }),
      choice({
        tool_calls: [
          {
            index: 0,
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '' },
          },
        ],
      }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      choice({
        tool_calls: [
          {
            index: 1,
            id: 'call_b',
            type: 'function',
            function: { name: 'get_time', arguments: '' },
          },
        ],
      }),
      choice({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      choice({}, 'tool_calls'),
    ]);
    for (const chunk of chunks) {
      expect(chunk).not.toHaveProperty('usage');
    }
  });

  it('adds the usage chunk, with the same id and no choices, only when asked', () => {
    const chunks = encodeAll(new ChatChunkEncoder('public-model', true), STREAM);
    const last = chunks[chunks.length - 1];
    expect(last).toEqual({
      id: 'chatcmpl-abc123',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'public-model',
      choices: [],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 60 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    });
    const before = chunks.slice(0, -1);
    expect(before).toHaveLength(11);
    for (const chunk of before) {
      expect(chunk.usage).toBeNull();
      expect(chunk.id).toBe(last.id);
    }
    expect(before[before.length - 1].choices[0].finish_reason).toBe('tool_calls');
  });

  it('puts the role on the first chunk only and a finish reason on the last choice chunk only', () => {
    const chunks = encodeAll(new ChatChunkEncoder('m', false), STREAM);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.slice(1).every((c) => c.choices[0].delta.role === undefined)).toBe(true);
    const finishes = chunks.map((c) => c.choices[0].finish_reason);
    expect(finishes.slice(0, -1).every((f) => f === null)).toBe(true);
  });

  it('routes interleaved argument fragments to the right tool index', () => {
    const chunks = encodeAll(new ChatChunkEncoder('m', false), [
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'block_start', index: 5, block: { kind: 'tool_call', id: 'c1', name: 'a' } },
      { type: 'block_start', index: 7, block: { kind: 'tool_call', id: 'c2', name: 'b' } },
      { type: 'tool_arguments_delta', index: 7, json: '{"b":1}' },
      { type: 'tool_arguments_delta', index: 5, json: '{"a":1}' },
      { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE },
    ]);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls.map((c) => [c.index, c.id ?? null, c.function.arguments])).toEqual([
      [0, 'c1', ''],
      [1, 'c2', ''],
      [1, null, '{"b":1}'],
      [0, null, '{"a":1}'],
    ]);
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['refusal', 'content_filter'],
    ['pause', 'stop'],
    ['error', 'stop'],
  ] as const)('maps finish reason %s to %s', (canonical, chat) => {
    const chunks = encodeAll(new ChatChunkEncoder('m', false), [
      { type: 'message_start', id: 'x', model: 'm', created: 1 },
      { type: 'message_stop', finishReason: canonical, usage: USAGE },
    ]);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe(chat);
  });

  it('keeps an id that already starts with chatcmpl-', () => {
    const [first] = new ChatChunkEncoder('m', false).encode({
      type: 'message_start',
      id: 'chatcmpl-xyz',
      model: 'm',
      created: 1,
    });
    expect(first.id).toBe('chatcmpl-xyz');
  });
});

describe('chatCompletionId', () => {
  it('prefixes an id once', () => {
    expect(chatCompletionId('msg_1')).toBe('chatcmpl-msg_1');
    expect(chatCompletionId('chatcmpl-1')).toBe('chatcmpl-1');
  });
});

describe('toChatUsage', () => {
  it('fills zero details when the canonical usage has none', () => {
    expect(toChatUsage({ inputTokens: 3, outputTokens: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it("reports an Anthropic answer's cache reads and writes", () => {
    const usage = toChatUsage({
      inputTokens: 20100,
      outputTokens: 50,
      cachedInputTokens: 18000,
      cacheWriteInputTokens: 2000,
    });
    expect(usage.prompt_tokens_details).toEqual({
      cached_tokens: 18000,
      cache_write_tokens: 2000,
    });
  });
});

describe('toChatCompletion', () => {
  const base: Omit<CanonicalResponse, 'content' | 'finishReason'> = {
    id: 'r1',
    model: 'upstream',
    created: 1_700_000_001,
    usage: { inputTokens: 10, outputTokens: 5 },
  };

  it('renders text and reasoning as a chat.completion', () => {
    expect(
      toChatCompletion(
        {
          ...base,
          content: [
            { type: 'reasoning', text: 'Hmm. ' },
            { type: 'reasoning', text: 'Ok.', signature: 's' },
            { type: 'text', text: 'Hello' },
            { type: 'text', text: ' world' },
          ],
          finishReason: 'stop',
        },
        'public',
      ),
    ).toEqual({
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: 1_700_000_001,
      model: 'public',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello world',
            refusal: null,
            annotations: [],
            reasoning_content: 'Hmm. Ok.',
            thinking_blocks: [{ type: 'thinking', thinking: 'Ok.', signature: 's' }],
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  });

  it('gives null content and the tool calls when the answer is only tool calls', () => {
    const out = toChatCompletion(
      {
        ...base,
        content: [
          { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}' },
          { type: 'tool_call', id: 'c2', name: 'g', arguments: '{}' },
        ],
        finishReason: 'tool_calls',
      },
      'public',
    ) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    const message = out.choices[0].message;
    expect(message.content).toBeNull();
    expect(message).not.toHaveProperty('reasoning_content');
    expect(message.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
      { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
    ]);
    expect(out.choices[0].finish_reason).toBe('tool_calls');
  });

  it('gives an empty string content (not null) for an empty answer without tool calls', () => {
    const out = toChatCompletion({ ...base, content: [], finishReason: 'length' }, 'public') as {
      choices: { message: Record<string, unknown>; finish_reason: string }[];
    };
    expect(out.choices[0].message.content).toBe('');
    expect(out.choices[0].message).not.toHaveProperty('tool_calls');
    expect(out.choices[0].finish_reason).toBe('length');
  });
});
