import type { CanonicalRequest } from '../../core/canonical';
import type { ResponsesRequestDto } from './responses-request.dto';
import { decodeResponsesRequest } from './responses.decoder';
import { RESPONSES_PARAMS } from './responses.params';

function decode(body: Record<string, unknown>): CanonicalRequest {
  return decodeResponsesRequest(body as unknown as ResponsesRequestDto);
}

const WEATHER_PARAMS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
};

describe('decodeResponsesRequest', () => {
  it('decodes a multi-turn conversation with images, reasoning and a tool round trip (golden)', () => {
    const body = {
      model: 'gpt-x',
      instructions: 'You are terse.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look at these' },
            {
              type: 'input_image',
              image_url: 'data:image/png;base64,iVBORw0KGgo=',
              detail: 'high',
            },
            { type: 'input_image', image_url: 'https://img.test/cat.jpg', detail: 'auto' },
            { type: 'input_image', file_id: 'file-1', detail: 'auto' },
          ],
        },
        { type: 'message', role: 'developer', content: 'Answer in French.' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: '**Plan**' },
            { type: 'summary_text', text: 'Check the weather.' },
          ],
          encrypted_content: 'gAAAA-opaque',
        },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
        },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          status: 'completed',
        },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp_c":18}' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [{ type: 'input_text', text: 'sunny' }],
        },
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather',
          parameters: WEATHER_PARAMS,
          strict: true,
        },
        { type: 'function', name: 'ping', parameters: null, strict: null },
        { type: 'web_search_preview' },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      max_output_tokens: 256,
      temperature: 0.3,
      top_p: 0.9,
      stream: true,
      reasoning: { effort: 'high', summary: 'detailed' },
      metadata: { team: 'a' },
      text: { format: { type: 'json_object' } },
      include: ['reasoning.encrypted_content'],
      store: false,
      previous_response_id: null,
      prompt_cache_key: 'k1',
    };
    expect(decode(body)).toEqual({
      model: 'gpt-x',
      system: [
        { type: 'text', text: 'You are terse.' },
        // Sent after the first turn: it keeps its place.
        { type: 'text', text: 'Answer in French.', at: 1 },
      ],
      messages: [
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'Look at these' },
            {
              type: 'image',
              source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
              detail: 'high',
            },
            {
              type: 'image',
              source: { kind: 'url', url: 'https://img.test/cat.jpg' },
              detail: 'auto',
            },
          ],
        },
        {
          role: 'assistant',
          parts: [
            {
              type: 'reasoning',
              summary: ['**Plan**', 'Check the weather.'],
              encrypted: 'gAAAA-opaque',
              itemId: 'rs_1',
            },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              type: 'tool_result',
              toolCallId: 'call_1',
              content: [{ type: 'text', text: '{"temp_c":18}' }],
            },
            {
              type: 'tool_result',
              toolCallId: 'call_2',
              content: [{ type: 'text', text: 'sunny' }],
            },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather', parameters: WEATHER_PARAMS, strict: true },
        { name: 'ping', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { type: 'tool', name: 'get_weather' },
      parallelToolCalls: false,
      maxOutputTokens: 256,
      temperature: 0.3,
      topP: 0.9,
      stop: [],
      stream: true,
      reasoning: { effort: 'high', summary: 'detailed' },
      metadata: { team: 'a' },
      responseFormat: { type: 'json_object' },
      source: 'responses',
      paramNames: RESPONSES_PARAMS,
      extra: {
        text: { format: { type: 'json_object' } },
        include: ['reasoning.encrypted_content'],
        store: false,
        previous_response_id: null,
        prompt_cache_key: 'k1',
      },
    });
  });

  it('reads a string input as one user message', () => {
    const req = decode({ model: 'm', instructions: 'x', input: 'hello' });
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hello' }] }]);
    expect(req.system).toEqual([{ type: 'text', text: 'x' }]);
    expect(req.stream).toBe(false);
    expect(req.reasoning).toBeUndefined();
    expect(req.toolChoice).toBeUndefined();
  });

  it('keeps separate user turns apart and a refusal as assistant text', () => {
    const req = decode({
      model: 'm',
      input: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'user', parts: [{ type: 'text', text: 'a' }] },
      { role: 'user', parts: [{ type: 'text', text: 'b' }] },
      { role: 'assistant', parts: [{ type: 'text', text: 'No.' }] },
    ]);
  });

  it('carries raw reasoning text of a replayed reasoning item', () => {
    const req = decode({
      model: 'm',
      input: [
        {
          type: 'reasoning',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'step 1' }],
        },
      ],
    });
    expect(req.messages[0].parts).toEqual([{ type: 'reasoning', summary: [], text: 'step 1' }]);
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    ['required', { type: 'required' }],
    [{ type: 'allowed_tools', mode: 'auto', tools: [] }, undefined],
    [{ type: 'file_search' }, undefined],
  ])('maps tool_choice %j', (choice, expected) => {
    expect(decode({ model: 'm', input: 'x', tool_choice: choice }).toolChoice).toEqual(expected);
  });

  it('maps a summary request without effort, and the deprecated generate_summary', () => {
    expect(decode({ model: 'm', input: 'x', reasoning: { summary: 'auto' } }).reasoning).toEqual({
      summary: 'auto',
    });
    expect(
      decode({ model: 'm', input: 'x', reasoning: { effort: 'low', generate_summary: 'concise' } })
        .reasoning,
    ).toEqual({ effort: 'low', summary: 'concise' });
    expect(decode({ model: 'm', input: 'x', reasoning: {} }).reasoning).toBeUndefined();
  });

  it('skips items it cannot represent', () => {
    const req = decode({
      model: 'm',
      input: [
        { type: 'item_reference', id: 'msg_0' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
  });

  it('offers the functions of namespace tools flat, renaming a clash, and names history calls the same way (golden)', () => {
    const tools = [
      { type: 'function', name: 'lookup', parameters: WEATHER_PARAMS },
      {
        type: 'namespace',
        name: 'crm',
        description: 'Customer records.',
        tools: [
          { type: 'function', name: 'lookup', description: 'Finds a customer.' },
          { type: 'function', name: 'update', parameters: WEATHER_PARAMS, strict: true },
          { type: 'custom', name: 'patch' },
        ],
      },
      { type: 'web_search' },
    ];
    const req = decode({
      model: 'm',
      tools,
      input: [
        { role: 'user', content: 'Find Ada.' },
        { type: 'function_call', call_id: 'c1', namespace: 'crm', name: 'lookup', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', namespace: 'gone', name: 'old', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'found' },
        { type: 'function_call_output', call_id: 'c2', output: 'done' },
      ],
    });
    expect(req.tools).toEqual([
      { name: 'lookup', parameters: WEATHER_PARAMS },
      {
        name: 'crm__lookup',
        description: 'Finds a customer.',
        parameters: { type: 'object', properties: {} },
      },
      { name: 'update', parameters: WEATHER_PARAMS, strict: true },
    ]);
    expect(req.messages[1]).toEqual({
      role: 'assistant',
      parts: [
        { type: 'tool_call', id: 'c1', name: 'crm__lookup', arguments: '{}' },
        // A namespace the request no longer declares: qualified, so it cannot clash.
        { type: 'tool_call', id: 'c2', name: 'gone__old', arguments: '{}' },
      ],
    });
  });
});
