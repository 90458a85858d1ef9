import { GatewayError } from '../../../common/errors/gateway-errors';
import type { CanonicalRequest } from '../../../core/canonical';
import { decodeChatRequest } from '../../../formats/chat-completions/chat.decoder';
import type { ChatCompletionRequestDto } from '../../../formats/chat-completions/chat-request.dto';
import { decodeMessagesRequest } from '../../../formats/messages/messages.decoder';
import type { MessagesRequestDto } from '../../../formats/messages/messages-request.dto';
import { testModel } from '../../../testing/test-model';
import { toConverseRequest } from './to-bedrock';

const claude = testModel(
  'converse',
  { family: 'anthropic', upstreamId: 'anthropic.claude-sonnet-4-5-20250929-v1:0' },
  'bedrock',
);
const llama = testModel(
  'converse',
  { family: 'llama', upstreamId: 'meta.llama3-3-70b-instruct-v1:0', maxOutputTokens: 2048 },
  'bedrock',
);
const chat = (body: Partial<ChatCompletionRequestDto>): CanonicalRequest =>
  decodeChatRequest({ model: 'public-model', messages: [], ...body });
const messages = (body: Partial<MessagesRequestDto>): CanonicalRequest =>
  decodeMessagesRequest({ model: 'public-model', max_tokens: 1000, messages: [], ...body });

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe('toConverseRequest', () => {
  it('translates a chat tool round trip with an image, system prompt and settings (golden)', () => {
    const { body, dropped } = toConverseRequest(
      chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'user', content: 'Thanks.' },
        ],
        tools: [WEATHER],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        max_completion_tokens: 500,
        temperature: 0.2,
        top_p: 0.9,
        stop: ['END'],
        user: 'u-1',
      }),
      claude,
    );
    expect(body).toEqual({
      messages: [
        {
          role: 'user',
          content: [
            { text: 'Weather here?' },
            { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { text: 'Checking.' },
            { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: { toolUseId: 'call_1', content: [{ text: '18C' }], status: 'success' },
            },
            { text: 'Thanks.' },
          ],
        },
      ],
      system: [{ text: 'Be brief.' }],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather',
              inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
            },
          },
        ],
        toolChoice: { tool: { name: 'get_weather' } },
      },
      inferenceConfig: { maxTokens: 500, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    });
    expect(dropped).toEqual(['user']);
  });

  it('sends Claude thinking with its budget, and signed and redacted reasoning back (golden)', () => {
    const { body, dropped } = toConverseRequest(
      messages({
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        temperature: 0.5,
        top_k: 40,
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Hmm.', signature: 'c2lnLTE=' },
              { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
              { type: 'text', text: 'Hello.' },
            ],
          },
          { role: 'user', content: 'Again' },
        ],
      }),
      claude,
    );
    expect(body).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Hi' }] },
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Hmm.', signature: 'c2lnLTE=' } } },
            { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
            { text: 'Hello.' },
          ],
        },
        { role: 'user', content: [{ text: 'Again' }] },
      ],
      inferenceConfig: { maxTokens: 4000 },
      additionalModelRequestFields: {
        thinking: { type: 'enabled', budget_tokens: 2048 },
        top_k: 40,
      },
    });
    // Thinking takes temperature 1 only.
    expect(dropped).toEqual(['temperature']);
  });

  it('keeps reasoning from another vendor out, and drops reasoning for a non-Claude model', () => {
    const { body, dropped } = toConverseRequest(
      chat({
        reasoning_effort: 'high',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
          { role: 'user', content: 'Again' },
        ],
      }),
      llama,
    );
    expect(body.additionalModelRequestFields).toBeUndefined();
    expect(body.inferenceConfig).toEqual({ maxTokens: 2048 });
    expect(dropped).toEqual(['reasoning_effort']);
  });

  it("lowers a cap above the model's output limit (Claude Code asks 32000) and lists it", () => {
    const { body, dropped } = toConverseRequest(
      messages({ max_tokens: 32000, messages: [{ role: 'user', content: 'Hi' }] }),
      llama,
    );
    expect(body.inferenceConfig).toEqual({ maxTokens: 2048 });
    expect(dropped).toEqual(['max_tokens']);
  });

  it('asks for JSON by instruction, and lists what Converse cannot say', () => {
    const { body, dropped } = toConverseRequest(
      chat({
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [WEATHER],
        tool_choice: 'none',
        parallel_tool_calls: false,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'out', schema: { type: 'object' } },
        },
      }),
      claude,
    );
    expect(body.system).toEqual([
      {
        text: expect.stringContaining('The object must match this JSON Schema: {"type":"object"}'),
      },
    ]);
    expect((body.toolConfig as Record<string, unknown>).toolChoice).toBeUndefined();
    expect(dropped).toEqual(['tool_choice', 'parallel_tool_calls']);
  });

  it('declares the tools a history calls when the request declares none, and fills an empty result', () => {
    const { body } = toConverseRequest(
      chat({
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: '' },
        ],
      }),
      claude,
    );
    expect(body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }],
    });
    expect((body.messages as { content: unknown[] }[])[2].content).toEqual([
      { toolResult: { toolUseId: 'c1', content: [{ text: '(no output)' }], status: 'success' } },
    ]);
  });

  it('refuses an image link (Bedrock fetches nothing) and an unknown image type', () => {
    const image = (url: string): CanonicalRequest =>
      chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    expect(() => toConverseRequest(image('https://img.test/cat.png'), claude)).toThrow(
      GatewayError,
    );
    expect(() => toConverseRequest(image('data:image/tiff;base64,AAAA'), claude)).toThrow(
      /png, jpeg, gif and webp/,
    );
  });
});
