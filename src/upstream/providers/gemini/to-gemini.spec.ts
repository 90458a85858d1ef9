import type { CanonicalRequest } from '../../../core/canonical';
import { decodeChatRequest } from '../../../formats/chat-completions/chat.decoder';
import type { ChatCompletionRequestDto } from '../../../formats/chat-completions/chat-request.dto';
import { decodeMessagesRequest } from '../../../formats/messages/messages.decoder';
import type { MessagesRequestDto } from '../../../formats/messages/messages-request.dto';
import { testModel } from '../../../testing/test-model';
import { toGeminiRequest } from './to-gemini';

const model = testModel('gemini', { family: 'gemini' }, 'gemini');
const chat = (body: Partial<ChatCompletionRequestDto>): CanonicalRequest =>
  decodeChatRequest({ model: 'public-model', messages: [], ...body });

describe('toGeminiRequest', () => {
  it('translates a chat tool round trip with images, system prompt and settings (golden)', () => {
    const { body, dropped } = toGeminiRequest(
      chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
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
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
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
        ],
        tool_choice: 'required',
        max_completion_tokens: 500,
        temperature: 0.2,
        top_p: 0.9,
        stop: ['END'],
        reasoning_effort: 'low',
        user: 'u-1',
      }),
      model,
    );
    expect(body).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Weather here?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/*', fileUri: 'https://img.test/cat.jpg' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Checking.' },
            { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              functionResponse: { id: 'call_1', name: 'get_weather', response: { output: '18C' } },
            },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather',
              parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: {
        maxOutputTokens: 500,
        temperature: 0.2,
        topP: 0.9,
        stopSequences: ['END'],
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      },
    });
    expect(dropped).toEqual(['user']);
  });

  it('gives a Gemini thought signature back on the call it signed, and no other signature', () => {
    const request = decodeMessagesRequest({
      model: 'public-model',
      max_tokens: 100,
      system: 'S',
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'Go' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Plan.', signature: 'gwgem1.c2lnLTE=' },
            { type: 'tool_use', id: 'call_9', name: 'lookup', input: { q: 'x' } },
            { type: 'thinking', thinking: 'Other.', signature: 'anthropic-signature' },
            { type: 'text', text: 'Done.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_9', content: 'found', is_error: true },
          ],
        },
      ],
    } as unknown as MessagesRequestDto);
    const { body } = toGeminiRequest(request, model);
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Go' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { id: 'call_9', name: 'lookup', args: { q: 'x' } },
            thoughtSignature: 'c2lnLTE=',
          },
          { text: 'Done.' },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_9', name: 'lookup', response: { error: 'found' } } },
        ],
      },
    ]);
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 100,
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it('asks for JSON with the schema, and drops reasoning for a model without it', () => {
    const { body, dropped } = toGeminiRequest(
      chat({
        messages: [{ role: 'user', content: 'Hi' }],
        reasoning_effort: 'high',
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'r', schema: { type: 'object' } },
        },
      }),
      testModel(
        'gemini',
        { capabilities: { reasoning: false, tools: true, vision: true } },
        'gemini',
      ),
    );
    expect(body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object' },
    });
    expect(dropped).toEqual(['reasoning_effort']);
  });

  it('turns thinking off with a zero budget for effort none, and maps a named tool choice', () => {
    const { body } = toGeminiRequest(
      chat({
        messages: [{ role: 'user', content: 'Hi' }],
        reasoning_effort: 'none',
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      }),
      model,
    );
    expect(body.toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    expect(body.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 0, includeThoughts: false },
    });
  });

  it('refuses several choices, which one Gemini candidate cannot carry', () => {
    expect(() => toGeminiRequest(chat({ messages: [], n: 2 }), model)).toThrow(/'n'/);
  });
});
