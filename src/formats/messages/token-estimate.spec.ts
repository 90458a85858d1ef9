import type { CanonicalRequest } from '../../core/canonical';
import { IMAGE_TOKENS, MESSAGE_OVERHEAD, encodingFor, estimateInputTokens } from './token-estimate';

function request(extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'm',
    system: [],
    messages: [],
    tools: [],
    stop: [],
    stream: false,
    extra: {},
    ...extra,
  };
}

const user = (text: string): CanonicalRequest['messages'][number] => ({
  role: 'user',
  parts: [{ type: 'text', text }],
});

describe('estimateInputTokens', () => {
  it('uses o200k_base for the openai family and cl100k_base for every other', () => {
    expect(encodingFor('openai')).toBe('o200k_base');
    expect(encodingFor('anthropic')).toBe('cl100k_base');
    expect(encodingFor('llama')).toBe('cl100k_base');
  });

  it('counts the text of system and messages, plus framing per message', async () => {
    // "hello world" is two tokens in both encodings.
    expect(await estimateInputTokens(request({ messages: [user('hello world')] }), 'openai')).toBe(
      2 + MESSAGE_OVERHEAD,
    );
    expect(
      await estimateInputTokens(
        request({
          system: [{ type: 'text', text: 'hello world' }],
          messages: [user('hello world')],
        }),
        'anthropic',
      ),
    ).toBe(4 + MESSAGE_OVERHEAD);
  });

  it('tells the encodings apart where they differ', async () => {
    const text = 'Ünïcödé façade — naïve coöperation in 東京 and Zürich';
    const o200k = await estimateInputTokens(request({ messages: [user(text)] }), 'openai');
    const cl100k = await estimateInputTokens(request({ messages: [user(text)] }), 'anthropic');
    expect(o200k).not.toBe(cl100k);
  });

  it('counts tool calls, tool results, reasoning, images and tool definitions', async () => {
    const base = await estimateInputTokens(request({ messages: [user('x')] }), 'openai');
    const full = await estimateInputTokens(
      request({
        messages: [
          user('x'),
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'think think', signature: 'not counted' },
              { type: 'tool_call', id: 'a', name: 'get_weather', arguments: '{"city":"Paris"}' },
            ],
          },
          {
            role: 'user',
            parts: [
              { type: 'tool_result', toolCallId: 'a', content: [{ type: 'text', text: '18C' }] },
              { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
            ],
          },
        ],
        tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }],
      }),
      'openai',
    );
    expect(full - base).toBeGreaterThan(2 * MESSAGE_OVERHEAD + IMAGE_TOKENS + 10);
    expect(full - base).toBeLessThan(2 * MESSAGE_OVERHEAD + IMAGE_TOKENS + 60);
  });

  it('counts special-token text as plain text instead of failing', async () => {
    const n = await estimateInputTokens(request({ messages: [user('<|endoftext|>')] }), 'openai');
    expect(n).toBeGreaterThan(1 + MESSAGE_OVERHEAD);
  });
});
