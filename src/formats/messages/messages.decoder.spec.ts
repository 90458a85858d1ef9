import type { CanonicalRequest } from '../../core/canonical';
import type { MessagesRequestDto } from './messages-request.dto';
import { decodeMessagesRequest } from './messages.decoder';
import { MESSAGES_PARAMS } from './messages.params';

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
};

/** A second turn after a tool call with thinking: every block type the decoder reads. */
const BODY: MessagesRequestDto = {
  model: 'claude-x',
  max_tokens: 2048,
  system: [
    { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Use tools.' },
  ],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Weather here?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes.' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Call the tool.', signature: 'EqQB==' },
        { type: 'redacted_thinking', data: 'EmwK==' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18C', is_error: false }],
    },
    // Consecutive user turns merge, as the API does.
    { role: 'user', content: 'And tomorrow?' },
  ],
  tools: [
    { name: 'get_weather', description: 'Weather for a city', input_schema: WEATHER_SCHEMA },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
  ],
  tool_choice: { type: 'any', disable_parallel_tool_use: true },
  thinking: { type: 'enabled', budget_tokens: 1024 },
  stop_sequences: ['END'],
  temperature: 1,
  top_p: 0.99,
  top_k: 5,
  metadata: { user_id: 'u-1' },
  stream: true,
  service_tier: 'auto',
};

describe('decodeMessagesRequest', () => {
  it('decodes every block type, tools, tool choice and thinking (golden)', () => {
    const expected: CanonicalRequest = {
      model: 'claude-x',
      system: [
        { type: 'text', text: 'Be brief.', cache: { type: 'ephemeral' } },
        { type: 'text', text: 'Use tools.' },
      ],
      messages: [
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
            { type: 'text', text: 'Notes.' },
          ],
        },
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', text: 'Call the tool.', signature: 'EqQB==' },
            { type: 'reasoning', encrypted: 'EmwK==', redacted: true },
            { type: 'text', text: 'Checking.' },
            {
              type: 'tool_call',
              id: 'toolu_1',
              name: 'get_weather',
              arguments: '{"city":"Paris"}',
            },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              type: 'tool_result',
              toolCallId: 'toolu_1',
              content: [{ type: 'text', text: '18C' }],
              isError: false,
            },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: WEATHER_SCHEMA,
          strict: undefined,
        },
      ],
      toolChoice: { type: 'required' },
      parallelToolCalls: false,
      maxOutputTokens: 2048,
      temperature: 1,
      topP: 0.99,
      stop: ['END'],
      stream: true,
      reasoning: { budgetTokens: 1024 },
      metadata: { user_id: 'u-1' },
      user: 'u-1',
      source: 'messages',
      paramNames: MESSAGES_PARAMS,
      extra: { top_k: 5, service_tier: 'auto' },
    };
    expect(decodeMessagesRequest(BODY)).toEqual(expected);
  });

  it('decodes a plain string system prompt and string content', () => {
    const req = decodeMessagesRequest({
      model: 'm',
      max_tokens: 10,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(req.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
    expect(req).toMatchObject({ tools: [], stop: [], stream: false, extra: {} });
    expect(req.reasoning).toBeUndefined();
    expect(req.toolChoice).toBeUndefined();
  });

  it.each([
    [{ type: 'auto' }, { type: 'auto' }],
    [{ type: 'none' }, { type: 'none' }],
    [{ type: 'any' }, { type: 'required' }],
    [
      { type: 'tool', name: 'f' },
      { type: 'tool', name: 'f' },
    ],
  ] as const)('maps tool_choice %j to %j', (choice, expected) => {
    const req = decodeMessagesRequest({ ...BODY, tool_choice: choice });
    expect(req.toolChoice).toEqual(expected);
    expect(req.parallelToolCalls).toBeUndefined();
  });

  it('takes the effort of adaptive thinking from output_config, medium by default', () => {
    const adaptive = { ...BODY, thinking: { type: 'adaptive' as const } };
    expect(decodeMessagesRequest(adaptive).reasoning).toEqual({ effort: 'medium' });
    const high = decodeMessagesRequest({ ...adaptive, output_config: { effort: 'high' } });
    expect(high.reasoning).toEqual({ effort: 'high' });
    // output_config also carries `format`, which is not modelled: it stays in extra.
    expect(high.extra.output_config).toEqual({ effort: 'high' });
    const odd = decodeMessagesRequest({ ...adaptive, output_config: { effort: 'extreme' } });
    expect(odd.reasoning).toEqual({ effort: 'medium' });
    expect(decodeMessagesRequest({ ...BODY, thinking: { type: 'disabled' } }).reasoning).toBe(
      undefined,
    );
  });

  it('keeps the place of a mid-conversation system message', () => {
    const req = decodeMessagesRequest({
      model: 'm',
      max_tokens: 10,
      system: 'First.',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: 'Second.' },
        { role: 'user', content: 'b' },
      ],
    });
    expect(req.system).toEqual([
      { type: 'text', text: 'First.' },
      { type: 'text', text: 'Second.', at: 1 },
    ]);
    // Not merged across the system message, which sits between the two.
    expect(req.messages).toEqual([
      { role: 'user', parts: [{ type: 'text', text: 'a' }] },
      { role: 'user', parts: [{ type: 'text', text: 'b' }] },
    ]);
  });

  it('keeps text and images of tool results and documents, and drops what it cannot carry', () => {
    const req = decodeMessagesRequest({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [
                { type: 'text', text: 'rows' },
                { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
              ],
            },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' },
            },
            {
              type: 'document',
              source: { type: 'content', content: [{ type: 'text', text: 'Inline doc.' }] },
            },
            { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            { type: 'search_result', source: 'https://x', title: 't', content: [] },
          ],
        },
      ],
    });
    expect(req.messages[0].parts).toEqual([
      {
        type: 'tool_result',
        toolCallId: 't',
        content: [
          { type: 'text', text: 'rows' },
          { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
        ],
      },
      { type: 'text', text: 'Inline doc.' },
    ]);
  });

  it('decodes a count_tokens body, which has no max_tokens', () => {
    const req = decodeMessagesRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(req.maxOutputTokens).toBeUndefined();
    expect(req.system).toEqual([]);
  });
});
