import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { validateChatRequest } from './chat-request.validation';

function valid(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'gpt-x',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ],
    ...extra,
  };
}

function rejection(body: unknown): InvalidRequestError {
  try {
    validateChatRequest(body);
  } catch (e) {
    if (e instanceof InvalidRequestError) {
      return e;
    }
    throw e;
  }
  throw new Error('expected validateChatRequest to reject the body');
}

describe('validateChatRequest', () => {
  it('returns the very same object, unknown fields included', () => {
    const body = valid({
      seed: 7,
      logit_bias: { '50256': -100 },
      service_tier: 'flex',
      prediction: { type: 'content', content: 'x' },
    });
    const out = validateChatRequest(body);
    expect(out).toBe(body);
    expect(out.seed).toBe(7);
    expect(out.service_tier).toBe('flex');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('accepts the full range of known fields', () => {
    const body = valid({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1,
      max_completion_tokens: 100,
      temperature: 2,
      top_p: 0,
      n: 1,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning_effort: 'high',
      stop: ['a', 'b', 'c', 'd'],
      metadata: { k: 'v' },
      response_format: { type: 'json_object' },
      user: 'u-1',
    });
    expect(validateChatRequest(body)).toBe(body);
  });

  it('accepts null for the nullable fields', () => {
    const body = valid({ max_tokens: null, temperature: null, stop: null, stream: null });
    expect(() => validateChatRequest(body)).not.toThrow();
  });

  it('accepts every message shape clients send', () => {
    const body = valid({
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Rules' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
        { role: 'assistant', content: 'done' },
      ],
    });
    expect(() => validateChatRequest(body)).not.toThrow();
  });

  it.each([
    ['a string', 'hello'],
    ['an array', [{ model: 'x' }]],
    ['null', null],
  ])('rejects a body that is %s', (_what, body) => {
    const err = rejection(body);
    expect(err).toMatchObject({ status: 400, param: null, code: 'invalid_json' });
  });

  it('rejects a request without a model, naming model', () => {
    const body = valid();
    delete body.model;
    const err = rejection(body);
    expect(err).toMatchObject({ status: 400, param: 'model', code: 'invalid_value' });
    expect(err.message).toBe("Missing required parameter: 'model'.");
  });

  it('rejects an empty or non-string model', () => {
    expect(rejection(valid({ model: '' })).param).toBe('model');
    expect(rejection(valid({ model: 42 })).param).toBe('model');
  });

  it('rejects a request without messages', () => {
    const body = valid();
    delete body.messages;
    expect(rejection(body)).toMatchObject({ param: 'messages' });
  });

  it('rejects messages that are not an array', () => {
    const err = rejection(valid({ messages: { role: 'user', content: 'x' } }));
    expect(err.param).toBe('messages');
    expect(err.message).toBe("Invalid type for 'messages': expected an array, but got an object.");
  });

  it.each([
    ['"hi"', 'hi', 'a string'],
    ['5', 5, 'an integer'],
    ['null', null, 'null'],
  ])('says which type messages must have when it is %s', (_label, messages, got) => {
    expect(rejection(valid({ messages })).message).toBe(
      `Invalid type for 'messages': expected an array, but got ${got}.`,
    );
  });

  it('rejects an empty messages array', () => {
    expect(rejection(valid({ messages: [] })).param).toBe('messages');
  });

  it('rejects a bad role, naming its index', () => {
    const err = rejection(
      valid({
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'u' },
          { role: 'robot', content: 'r' },
        ],
      }),
    );
    expect(err.param).toBe('messages[2].role');
    expect(err.message).toContain('messages[2].role');
  });

  it('rejects a message that is not an object', () => {
    expect(rejection(valid({ messages: [{ role: 'system', content: 's' }, 'hi'] })).param).toBe(
      'messages[1]',
    );
  });

  it('rejects a tool message without tool_call_id', () => {
    const err = rejection(
      valid({
        messages: [
          { role: 'system', content: 's' },
          { role: 'tool', content: 'result' },
        ],
      }),
    );
    expect(err.param).toBe('messages[1].tool_call_id');
  });

  it('rejects a user message without content', () => {
    expect(rejection(valid({ messages: [{ role: 'user' }] })).param).toBe('messages[0].content');
  });

  it('accepts an assistant message without content', () => {
    expect(() =>
      validateChatRequest(
        valid({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant' }] }),
      ),
    ).not.toThrow();
  });

  it('rejects content that is neither string nor array', () => {
    expect(rejection(valid({ messages: [{ role: 'user', content: 5 }] })).param).toBe(
      'messages[0].content',
    );
  });

  it('rejects a content part without a type', () => {
    expect(rejection(valid({ messages: [{ role: 'user', content: [{ text: 'x' }] }] })).param).toBe(
      'messages[0].content[0]',
    );
  });

  it('rejects a text part whose text is not a string', () => {
    expect(
      rejection(valid({ messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] }))
        .param,
    ).toBe('messages[0].content[0].text');
  });

  it('rejects an image part in a system message', () => {
    const content = [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }];
    expect(rejection(valid({ messages: [{ role: 'system', content }] })).param).toBe(
      'messages[0].content[0].type',
    );
  });

  it('rejects an image part without a url', () => {
    const content = [{ type: 'image_url', image_url: 'https://x/y.png' }];
    expect(rejection(valid({ messages: [{ role: 'user', content }] })).param).toBe(
      'messages[0].content[0].image_url',
    );
  });

  it('rejects an assistant tool call whose arguments are not a string', () => {
    const messages = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }],
      },
    ];
    expect(rejection(valid({ messages })).param).toBe('messages[1].tool_calls[0]');
  });

  it('rejects tool_calls that are not an array', () => {
    const messages = [{ role: 'assistant', content: 'x', tool_calls: {} }];
    expect(rejection(valid({ messages })).param).toBe('messages[0].tool_calls');
  });

  it.each([
    ['max_tokens', 0],
    ['max_completion_tokens', -1],
    ['temperature', 3],
    ['temperature', -0.1],
    ['top_p', 1.5],
    ['n', 0],
    ['reasoning_effort', 'extreme'],
  ])('rejects %s=%p, naming it', (field, value) => {
    const err = rejection(valid({ [field]: value }));
    expect(err.param).toBe(field);
    expect(err.code).toBe('invalid_value');
    expect(err.message).toMatch(new RegExp(`^Invalid value for '${field}'`));
  });

  it.each([
    ['max_tokens', 1.5, 'an integer'],
    ['temperature', '1', 'a number'],
    ['stream', 'yes', 'a boolean'],
    ['metadata', 'x', 'an object'],
    ['tools', { type: 'function' }, 'an array'],
    ['parallel_tool_calls', 'true', 'a boolean'],
    ['user', 42, 'a string'],
  ])('rejects %s=%p as the wrong type, saying which type it expects', (field, value, type) => {
    const err = rejection(valid({ [field]: value }));
    expect(err.param).toBe(field);
    expect(err.code).toBe('invalid_value');
    expect(err.message).toMatch(
      new RegExp(`^Invalid type for '${field}': expected ${type}, but got`),
    );
  });

  it('rejects stop with 5 entries', () => {
    const err = rejection(valid({ stop: ['a', 'b', 'c', 'd', 'e'] }));
    expect(err.param).toBe('stop');
  });

  it('rejects stop entries that are not strings', () => {
    expect(rejection(valid({ stop: ['a', 1] })).param).toBe('stop');
    expect(rejection(valid({ stop: 5 })).param).toBe('stop');
  });

  it('rejects a tool_choice that is neither a known mode nor an object', () => {
    expect(rejection(valid({ tool_choice: 'bogus' })).param).toBe('tool_choice');
    expect(rejection(valid({ tool_choice: 3 })).param).toBe('tool_choice');
    for (const ok of ['none', 'auto', 'required', { type: 'function', function: { name: 'f' } }]) {
      expect(() => validateChatRequest(valid({ tool_choice: ok }))).not.toThrow();
    }
  });

  it('accepts stop as a single string', () => {
    expect(() => validateChatRequest(valid({ stop: '\n' }))).not.toThrow();
  });

  it('rejects a function tool without a name', () => {
    expect(rejection(valid({ tools: [{ type: 'function', function: {} }] })).param).toBe(
      'tools[0].function.name',
    );
    expect(rejection(valid({ tools: ['f'] })).param).toBe('tools[0]');
  });

  it('reports the first bad field when several are wrong', () => {
    const body = valid({ temperature: 5, top_p: 7 });
    delete body.model;
    expect(rejection(body).param).toBe('model');
  });

  it('rejects a body whose own __proto__ key would hide the validation rules', () => {
    const body = JSON.parse('{"__proto__":{},"temperature":99}') as unknown;
    expect(rejection(body).param).toBe('model');
  });
});
