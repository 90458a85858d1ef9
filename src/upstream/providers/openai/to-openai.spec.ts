import type { CanonicalRequest } from '../../../core/canonical';
import { decodeMessagesRequest } from '../../../formats/messages/messages.decoder';
import type { MessagesRequestDto } from '../../../formats/messages/messages-request.dto';
import { decodeResponsesRequest } from '../../../formats/responses/responses.decoder';
import { decodeChatRequest } from '../../../formats/chat-completions/chat.decoder';
import type { ChatCompletionRequestDto } from '../../../formats/chat-completions/chat-request.dto';
import { testModel } from '../../../testing/test-model';
import { toOpenAiChatRequest } from './to-openai-chat';
import { toOpenAiResponsesRequest } from './to-openai-responses';

const messages = (body: Partial<MessagesRequestDto>): CanonicalRequest =>
  decodeMessagesRequest({
    model: 'public-model',
    max_tokens: 1000,
    system: 'Be brief.',
    messages: [],
    ...body,
  });

const WEATHER = {
  name: 'get_weather',
  description: 'Weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
};

/** A Messages tool round trip with thinking whose signature carries an OpenAI payload. */
const ROUND_TRIP: Partial<MessagesRequestDto> = {
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Need the tool.', signature: 'gwoai1.rs_9.gAAAAenc' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
        { type: 'text', text: 'And tomorrow?' },
      ],
    },
  ],
  tools: [WEATHER],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  stop_sequences: ['END'],
  metadata: { user_id: 'u-1' },
  stream: true,
};

describe('toOpenAiChatRequest', () => {
  it('translates a Messages tool round trip for a chat upstream (golden)', () => {
    const model = testModel('chat_completions', {
      capabilities: { reasoning: false, tools: true, vision: true },
    });
    const { body, dropped } = toOpenAiChatRequest(
      messages({ ...ROUND_TRIP, thinking: { type: 'enabled', budget_tokens: 2000 } }),
      model,
    );
    expect(body).toEqual({
      model: 'upstream-model-1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
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
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: WEATHER.input_schema,
          },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_completion_tokens: 1000,
      stop: ['END'],
      // metadata.user_id goes hashed, never raw.
      prompt_cache_key: 'gw-feaa9e597ed6ae9d157188c361ec4a14',
      safety_identifier: 'gw-a24a7f55f278dd49fb1f99c5507800cb',
      stream: true,
      stream_options: { include_usage: true },
    });
    // A non-reasoning model cannot honour thinking; dropping it changes no visible answer.
    expect(dropped).toEqual(['thinking']);
  });

  it('sends max_tokens to OpenAI-compatible servers and the effort to reasoning models', () => {
    const compatible = testModel('chat_completions', {}, 'openai-compatible');
    const { body } = toOpenAiChatRequest(
      messages({
        ...ROUND_TRIP,
        thinking: { type: 'enabled', budget_tokens: 2000 },
        top_k: 5,
      } as never),
      compatible,
    );
    expect(body).toMatchObject({ max_tokens: 1000, reasoning_effort: 'low', top_k: 5 });
    expect(body).not.toHaveProperty('max_completion_tokens');
  });

  it('rejects more than four stop sequences for OpenAI, naming stop_sequences', () => {
    expect(() =>
      toOpenAiChatRequest(
        messages({
          messages: [{ role: 'user', content: 'q' }],
          stop_sequences: ['a', 'b', 'c', 'd', 'e'],
        }),
        testModel('chat_completions'),
      ),
    ).toThrow(expect.objectContaining({ status: 400, param: 'stop_sequences' }));
  });
});

describe('toOpenAiResponsesRequest', () => {
  it('translates a Messages tool round trip, restoring the encrypted reasoning item (golden)', () => {
    const { stop_sequences: _, ...noStop } = ROUND_TRIP as Record<string, unknown>;
    void _;
    const { body, dropped } = toOpenAiResponsesRequest(
      messages({
        ...(noStop as Partial<MessagesRequestDto>),
        thinking: { type: 'enabled', budget_tokens: 20000 },
        temperature: 1,
      }),
      testModel('responses'),
    );
    expect(body).toEqual({
      model: 'upstream-model-1',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
        {
          type: 'reasoning',
          id: 'rs_9',
          summary: [{ type: 'summary_text', text: 'Need the tool.' }],
          encrypted_content: 'gAAAAenc',
        },
        { role: 'assistant', content: 'Checking.' },
        {
          type: 'function_call',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        },
        { type: 'function_call_output', call_id: 'call_1', output: '18C' },
        { role: 'user', content: [{ type: 'input_text', text: 'And tomorrow?' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather',
          parameters: WEATHER.input_schema,
          strict: false,
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_output_tokens: 1000,
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
      // metadata.user_id goes hashed, never raw.
      prompt_cache_key: 'gw-feaa9e597ed6ae9d157188c361ec4a14',
      safety_identifier: 'gw-a24a7f55f278dd49fb1f99c5507800cb',
      stream: true,
    });
    // Reasoning models reject sampling parameters.
    expect(dropped).toEqual(['temperature']);
  });

  it('rejects stop sequences, which the Responses API cannot honour', () => {
    expect(() =>
      toOpenAiResponsesRequest(
        messages({ messages: [{ role: 'user', content: 'q' }], stop_sequences: ['X'] }),
        testModel('responses'),
      ),
    ).toThrow(expect.objectContaining({ status: 400, param: 'stop_sequences' }));
  });

  it('maps chat response_format, images and a named tool choice; rejects n > 1', () => {
    const chat = (extra: Partial<ChatCompletionRequestDto>): CanonicalRequest =>
      decodeChatRequest({
        model: 'm',
        messages: [
          { role: 'system', content: 'S1' },
          { role: 'system', content: 'S2' },
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }],
          },
        ],
        tools: [{ type: 'function', function: { name: 'f', strict: true } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
        },
        ...extra,
      });
    const { body } = toOpenAiResponsesRequest(chat({}), testModel('responses'));
    expect(body).toMatchObject({
      instructions: 'S1\n\nS2',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'auto' },
          ],
        },
      ],
      tools: [{ type: 'function', name: 'f', strict: true }],
      tool_choice: { type: 'function', name: 'f' },
      text: {
        format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      },
    });
    expect(() => toOpenAiResponsesRequest(chat({ n: 3 }), testModel('responses'))).toThrow(
      expect.objectContaining({ param: 'n' }),
    );
  });

  it('decodes a Responses reasoning item carrying an Anthropic signature back to the signature', () => {
    const req = decodeResponsesRequest({
      model: 'm',
      input: [
        { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'gwant1.sig.EqQB==' },
      ],
    });
    expect(req.messages[0].parts[0]).toMatchObject({ type: 'reasoning', signature: 'EqQB==' });
    expect(req.messages[0].parts[0]).not.toHaveProperty('encrypted');
  });
});
