import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { validateCountTokensRequest, validateMessagesRequest } from './messages-request.validation';

function valid(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'claude-x',
    max_tokens: 1024,
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello' }],
    ...extra,
  };
}

function rejection(
  body: unknown,
  validate: (body: unknown) => unknown = validateMessagesRequest,
): InvalidRequestError {
  try {
    validate(body);
  } catch (e) {
    if (e instanceof InvalidRequestError) {
      return e;
    }
    throw e;
  }
  throw new Error('expected the body to be rejected');
}

describe('validateMessagesRequest', () => {
  it('returns the very same object, unknown fields included', () => {
    const body = valid({ service_tier: 'auto', container: 'c_1', vendor: { x: [1] } });
    const out = validateMessagesRequest(body);
    expect(out).toBe(body);
    expect(out.vendor).toEqual({ x: [1] });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('accepts every block type and the full range of known fields', () => {
    const body = valid({
      max_tokens: 0,
      stream: true,
      temperature: 1,
      top_p: 0,
      top_k: 0,
      stop_sequences: ['a', 'b'],
      metadata: { user_id: null },
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      tools: [
        { name: 'f', input_schema: { type: 'object' } },
        { type: 'custom', name: 'g', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      output_config: { effort: 'high' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } },
            { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } },
            { type: 'search_result', source: 'https://x', title: 't', content: [] },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 't', signature: 's' },
            { type: 'redacted_thinking', data: 'd' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1' },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'r' }] },
          ],
        },
      ],
    });
    expect(validateMessagesRequest(body)).toBe(body);
  });

  it.each([
    ['model', "Missing required parameter: 'model'.", { model: undefined }],
    ['model', "Invalid type for 'model': expected a string, but got an integer.", { model: 42 }],
    ['max_tokens', "Missing required parameter: 'max_tokens'.", { max_tokens: undefined }],
    ['max_tokens', "Invalid type for 'max_tokens': expected an integer", { max_tokens: 1.5 }],
    ['max_tokens', "Invalid value for 'max_tokens'", { max_tokens: -1 }],
    ['messages', "Missing required parameter: 'messages'.", { messages: undefined }],
    ['messages', "Invalid value for 'messages'", { messages: [] }],
    ['temperature', "Invalid value for 'temperature'", { temperature: 1.5 }],
    ['stream', "Invalid type for 'stream': expected a boolean", { stream: 'yes' }],
    ['stream', "Invalid type for 'stream': expected a boolean, but got null.", { stream: null }],
    [
      'thinking',
      "Invalid type for 'thinking': expected an object, but got null.",
      { thinking: null },
    ],
    [
      'tool_choice',
      "Invalid type for 'tool_choice': expected an object, but got null.",
      { tool_choice: null },
    ],
    [
      'messages',
      "Invalid type for 'messages': expected an array, but got a string.",
      { messages: 'hi' },
    ],
    [
      'stop_sequences',
      "Invalid type for 'stop_sequences': expected an array of strings.",
      { stop_sequences: [1] },
    ],
    ['system', "Invalid value for 'system'", { system: [{ type: 'image' }] }],
    ['messages.0', "Invalid value for 'messages.0': expected an object.", { messages: ['hi'] }],
    [
      'messages.0.role',
      "Invalid value for 'messages.0.role': expected 'user', 'assistant' or 'system'.",
      { messages: [{ role: 'tool', content: 'x' }] },
    ],
    [
      'messages.0.content',
      "Missing required parameter: 'messages.0.content'.",
      { messages: [{ role: 'user' }] },
    ],
    [
      'messages.0.content',
      "Invalid value for 'messages.0.content'",
      { messages: [{ role: 'user', content: 5 }] },
    ],
    [
      'messages.0.content.0',
      "Invalid value for 'messages.0.content.0'",
      { messages: [{ role: 'user', content: [{ text: 'x' }] }] },
    ],
    [
      'messages.0.content.0.text',
      "Invalid value for 'messages.0.content.0.text': expected a string.",
      { messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] },
    ],
    [
      'messages.0.content.0.source',
      "Missing required parameter: 'messages.0.content.0.source'.",
      { messages: [{ role: 'user', content: [{ type: 'image' }] }] },
    ],
    [
      'messages.0.content.0.input',
      "Invalid value for 'messages.0.content.0.input': expected an object.",
      {
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: '{}' }] },
        ],
      },
    ],
    [
      'messages.0.content.0.signature',
      "Missing required parameter: 'messages.0.content.0.signature'.",
      { messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 't' }] }] },
    ],
    [
      'messages.0.content.0.data',
      "Missing required parameter: 'messages.0.content.0.data'.",
      { messages: [{ role: 'assistant', content: [{ type: 'redacted_thinking' }] }] },
    ],
    [
      'messages.0.content.0.tool_use_id',
      "Missing required parameter: 'messages.0.content.0.tool_use_id'.",
      { messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] },
    ],
    [
      'messages.0.content.0.content.0.text',
      "Missing required parameter: 'messages.0.content.0.content.0.text'.",
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }],
          },
        ],
      },
    ],
    [
      'tools.0.name',
      "Missing required parameter: 'tools.0.name'.",
      { tools: [{ input_schema: {} }] },
    ],
    [
      'tools.0.input_schema',
      "Missing required parameter: 'tools.0.input_schema'.",
      { tools: [{ name: 'f' }] },
    ],
    [
      'tool_choice.type',
      "Invalid value for 'tool_choice.type'",
      { tool_choice: { type: 'required' } },
    ],
    [
      'tool_choice.name',
      "Missing required parameter: 'tool_choice.name'.",
      { tool_choice: { type: 'tool' } },
    ],
    ['thinking.type', "Invalid value for 'thinking.type'", { thinking: { type: 'on' } }],
    [
      'thinking.budget_tokens',
      "Missing required parameter: 'thinking.budget_tokens'.",
      { thinking: { type: 'enabled' } },
    ],
    [
      'thinking.budget_tokens',
      "Invalid value for 'thinking.budget_tokens': expected an integer.",
      { thinking: { type: 'enabled', budget_tokens: '1k' } },
    ],
  ])('rejects a bad %s with "%s"', (param, message, extra) => {
    const e = rejection(valid(extra));
    expect(e.status).toBe(400);
    expect(e.param).toBe(param);
    expect(e.message.startsWith(message)).toBe(true);
  });

  it('accepts every role its error message lists', () => {
    const roles = ['user', 'assistant', 'system'];
    for (const role of roles) {
      expect(() =>
        validateMessagesRequest(valid({ messages: [{ role, content: 'x' }] })),
      ).not.toThrow();
    }
    const e = rejection(valid({ messages: [{ role: 'tool', content: 'x' }] }));
    expect(e.message.match(/'[a-z]+'/g)).toEqual(roles.map((r) => `'${r}'`));
  });

  it.each([null, [1], 'text', 7])('rejects a body that is not an object (%j)', (body) => {
    expect(rejection(body).code).toBe('invalid_json');
  });

  it('never lets an own __proto__ key reach the prototype', () => {
    const body = JSON.parse(
      '{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}',
    ) as Record<string, unknown>;
    validateMessagesRequest(body);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    "refuses a content block of type '%s' with a 400 naming the block",
    (type) => {
      const body = JSON.parse(
        `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"${type}"}]}]}`,
      ) as unknown;
      let err: unknown;
      try {
        validateMessagesRequest(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err).toMatchObject({ param: 'messages.0.content.1.type' });
    },
  );

  it('still forwards a block type it does not know', () => {
    const body = {
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: [{ type: 'search_result', source: 'x' }] }],
    };
    expect(validateMessagesRequest(body)).toBe(body);
  });
});

describe('validateCountTokensRequest', () => {
  it('accepts a body without max_tokens or system', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect(validateCountTokensRequest(body)).toBe(body);
  });

  it('still checks the messages', () => {
    const e = rejection(
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      validateCountTokensRequest,
    );
    expect(e.param).toBe('messages.0.content.0.text');
  });
});
