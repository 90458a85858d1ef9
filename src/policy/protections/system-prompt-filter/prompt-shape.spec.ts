import type { CanonicalRequest } from '../../../core/canonical';
import { estimatePromptTokens } from '../../../limits/tokens/token-estimator';
import { promptShapeOf } from './prompt-shape';

const request = (over: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'm',
  system: [{ type: 'text', text: 'You are Orion.' }],
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi there' }] }],
  tools: [],
  stop: [],
  stream: false,
  extra: {},
  ...over,
});

describe('promptShapeOf', () => {
  it('collects every text of the request and counts turns, tools and attachments', () => {
    const shape = promptShapeOf(
      request({
        messages: [
          {
            role: 'user',
            parts: [
              { type: 'text', text: 'Weather?' },
              { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
            ],
          },
          {
            role: 'assistant',
            parts: [
              { type: 'reasoning', text: 'Think.', summary: ['Sum.'] },
              { type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            ],
          },
          {
            role: 'user',
            parts: [
              {
                type: 'tool_result',
                toolCallId: 'c1',
                content: [
                  { type: 'text', text: 'Sunny' },
                  { type: 'image', source: { kind: 'url', url: 'https://x/z.png' } },
                ],
              },
            ],
          },
        ],
        tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }],
      }),
    );
    expect(shape).toEqual({
      texts: [
        'You are Orion.',
        'Weather?',
        'Think.',
        'Sum.',
        'get_weather',
        '{"city":"Paris"}',
        'Sunny',
        'get_weather',
        'Weather',
        '{"type":"object"}',
      ],
      messageCount: 4,
      toolCount: 1,
      attachmentCount: 2,
    });
  });

  it('gives a longer prompt a larger estimate', () => {
    const short = estimatePromptTokens(promptShapeOf(request()), 'openai');
    const long = estimatePromptTokens(
      promptShapeOf(request({ system: [{ type: 'text', text: 'You are Orion. '.repeat(50) }] })),
      'openai',
    );
    expect(short).toBeGreaterThan(0);
    expect(long).toBeGreaterThan(short + 100);
  });
});
