import type { CanonicalRequest } from '../../../core/canonical';
import { decodeChatRequest } from '../../../formats/chat-completions/chat.decoder';
import type { ChatCompletionRequestDto } from '../../../formats/chat-completions/chat-request.dto';
import { testModel } from '../../../testing/test-model';
import { toGeminiSignature } from '../gemini/gemini.wire';
import { JSON_OBJECT_INSTRUCTION, toAnthropicRequest } from './to-anthropic';

const model = testModel('messages');
const chat = (body: Partial<ChatCompletionRequestDto>): CanonicalRequest =>
  decodeChatRequest({ model: 'public-model', messages: [], ...body });

describe('toAnthropicRequest', () => {
  it('translates a chat tool round trip with images, system order and tool settings (golden)', () => {
    const { body, dropped } = toAnthropicRequest(
      chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: 'Use metric units.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://img.test/cat.jpg' } },
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
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'tool', tool_call_id: 'call_2', content: '14:00' },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
          { type: 'function', function: { name: 'get_time' } },
        ],
        tool_choice: 'required',
        parallel_tool_calls: false,
        stop: ['END'],
        temperature: 0.4,
        user: 'user-7',
        stream: true,
        stream_options: { include_usage: true },
      }),
      model,
    );
    expect(dropped).toEqual([]);
    expect(body).toEqual({
      model: 'upstream-model-1',
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use metric units.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
            { type: 'image', source: { type: 'url', url: 'https://img.test/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            {
              type: 'tool_use',
              id: 'call_2',
              name: 'get_time',
              input: {},
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'call_1',
              content: [{ type: 'text', text: '18C' }],
            },
            {
              type: 'tool_result',
              tool_use_id: 'call_2',
              content: [{ type: 'text', text: '14:00' }],
            },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
        {
          name: 'get_time',
          input_schema: { type: 'object', properties: {} },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      max_tokens: 64000,
      temperature: 0.4,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-7' },
      stream: true,
    });
  });

  it('derives a thinking budget from the effort, below max_tokens, and drops sampling thinking forbids', () => {
    const { body, dropped } = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: 'high',
        temperature: 0.2,
        top_p: 0.5,
      }),
      model,
    );
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(body.max_tokens).toBe(64000);
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_p');
    expect(dropped).toEqual(['temperature', 'top_p']);
  });

  it('clamps the budget under the client max_tokens, and raises max_tokens when under the 1024 minimum', () => {
    const clamped = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: 'high',
        max_completion_tokens: 4000,
      }),
      model,
    ).body;
    expect(clamped).toMatchObject({ max_tokens: 4000, thinking: { budget_tokens: 3999 } });
    const raised = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: 'low',
        max_tokens: 500,
      }),
      model,
    ).body;
    expect(raised).toMatchObject({ max_tokens: 1524, thinking: { budget_tokens: 1024 } });
  });

  it('sends no thinking for effort none, and drops thinking when a tool is forced', () => {
    expect(
      toAnthropicRequest(
        chat({ messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'none' }),
        model,
      ).body,
    ).not.toHaveProperty('thinking');
    const forced = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: 'low',
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      }),
      model,
    );
    expect(forced.body).not.toHaveProperty('thinking');
    expect(forced.body.tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(forced.dropped).toEqual(['reasoning_effort']);
  });

  it('restores signed and redacted thinking first in the assistant turn, and drops unsigned reasoning', () => {
    const { body } = toAnthropicRequest(
      chat({
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'ignored when thinking_blocks are present',
            thinking_blocks: [
              { type: 'thinking', thinking: 'Plan.', signature: 'EqQB==' },
              { type: 'redacted_thinking', data: 'opaque' },
            ],
            tool_calls: [
              { id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            ],
          },
          { role: 'tool', tool_call_id: 't1', content: 'ok' },
          { role: 'assistant', content: 'Done.', reasoning_content: 'unsigned' },
        ],
      }),
      model,
    );
    const messages = body.messages as { role: string; content: unknown[] }[];
    expect(messages[1].content).toEqual([
      { type: 'thinking', thinking: 'Plan.', signature: 'EqQB==' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
    ]);
    // The last assistant turn's end is the default cache breakpoint.
    expect(messages[3].content).toEqual([
      { type: 'text', text: 'Done.', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it("leaves out a Gemini turn's thought signature, which Claude would refuse", () => {
    const { body } = toAnthropicRequest(
      chat({
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: 'A.',
            thinking_blocks: [
              { type: 'thinking', thinking: 'Thought.', signature: toGeminiSignature('AAAA') },
            ],
          },
          { role: 'user', content: 'again' },
        ],
      }),
      model,
    );
    const messages = body.messages as { role: string; content: unknown[] }[];
    expect(messages[1].content).toEqual([
      { type: 'text', text: 'A.', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('uses output_config.format for json_schema and a system instruction for json_object', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    const withSchema = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'q' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      }),
      model,
    ).body;
    expect(withSchema.output_config).toEqual({ format: { type: 'json_schema', schema } });
    const jsonObject = toAnthropicRequest(
      chat({
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'q' },
        ],
        response_format: { type: 'json_object' },
      }),
      model,
    ).body;
    expect(jsonObject.system).toEqual([
      { type: 'text', text: 'S' },
      { type: 'text', text: JSON_OBJECT_INSTRUCTION, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it.each([
    ['n', { n: 2 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 3 }],
    ['audio', { audio: { voice: 'alloy' } }],
  ])('rejects %s, which would change the answer, with a 400 naming it', (param, extra) => {
    expect(() =>
      toAnthropicRequest(chat({ messages: [{ role: 'user', content: 'q' }], ...extra }), model),
    ).toThrow(expect.objectContaining({ status: 400, param }));
  });

  it('drops and lists parameters Anthropic cannot honour that do not change the answer', () => {
    const { body, dropped } = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'q' }],
        n: 1,
        logprobs: false,
        seed: 7,
        frequency_penalty: 0.5,
        logit_bias: { '1': 2 },
        temperature: 1.5,
        top_p: 0.9,
        metadata: { team: 'a' },
      }),
      model,
    );
    expect(body.temperature).toBe(1);
    expect(body).not.toHaveProperty('top_p');
    expect(body).not.toHaveProperty('seed');
    expect(dropped.sort()).toEqual([
      'frequency_penalty',
      'logit_bias',
      'metadata',
      'seed',
      'temperature',
      'top_p',
    ]);
  });
});
