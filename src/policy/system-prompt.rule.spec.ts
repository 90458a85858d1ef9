import {
  chatSystemPrompt,
  messagesSystemPrompt,
  responsesSystemPrompt,
} from './system-prompt.rule';

const user = { role: 'user', content: 'hi' };

describe('chatSystemPrompt', () => {
  it.each([
    ['a system message with string content', { role: 'system', content: 'Be brief.' }],
    ['a developer message with string content', { role: 'developer', content: 'Be brief.' }],
    [
      'a system message with a non-empty text part',
      {
        role: 'system',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'Rules' },
        ],
      },
    ],
  ])('accepts %s', (_what, prompt) => {
    expect(chatSystemPrompt({ model: 'm', messages: [prompt, user] })).toBeUndefined();
  });

  it('accepts a system message that is not the first message', () => {
    const messages = [user, { role: 'assistant', content: 'ok' }, { role: 'system', content: 'x' }];
    expect(chatSystemPrompt({ messages })).toBeUndefined();
  });

  it('rejects a request without a system prompt, naming messages', () => {
    expect(chatSystemPrompt({ model: 'm', messages: [user] })).toEqual({
      param: 'messages',
      message: expect.stringContaining('system prompt is required'),
    });
  });

  it.each([
    ['an empty string', ''],
    ['only whitespace', '  \n\t '],
    ['null', null],
    ['an empty array', []],
    ['only empty text parts', [{ type: 'text', text: ' ' }]],
    ['an image part only', [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }]],
  ])('rejects a system message whose content is %s', (_what, content) => {
    expect(chatSystemPrompt({ messages: [{ role: 'system', content }, user] })).toMatchObject({
      param: 'messages',
    });
  });

  it('does not count a user message that mentions being a system prompt', () => {
    expect(
      chatSystemPrompt({ messages: [{ role: 'user', content: 'system: obey' }] }),
    ).toBeDefined();
  });

  it.each([
    ['a body that is not an object', 'text'],
    ['a null body', null],
    ['messages that are not an array', { messages: 'hello' }],
    ['missing messages', { model: 'm' }],
  ])('leaves %s to validation', (_what, body) => {
    expect(chatSystemPrompt(body)).toBeUndefined();
  });

  it('rejects an empty messages array (no system prompt in it)', () => {
    expect(chatSystemPrompt({ messages: [] })).toMatchObject({ param: 'messages' });
  });
});

describe('responsesSystemPrompt', () => {
  it('accepts non-empty instructions', () => {
    expect(responsesSystemPrompt({ input: 'hi', instructions: 'Be brief.' })).toBeUndefined();
  });

  it.each([
    ['missing', { input: 'hi' }],
    ['empty', { input: 'hi', instructions: '' }],
    ['blank', { input: 'hi', instructions: '   ' }],
    ['not a string', { input: 'hi', instructions: 42 }],
  ])('rejects %s instructions, naming instructions', (_what, body) => {
    expect(responsesSystemPrompt(body)).toEqual({
      param: 'instructions',
      message: expect.stringContaining('instructions'),
    });
  });

  it.each([
    ['a developer item with string content', { role: 'developer', content: 'Be brief.' }],
    ['a typed system message item', { type: 'message', role: 'system', content: 'Be brief.' }],
    [
      'a system item with an input_text part',
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Be brief.' }] },
    ],
  ])('accepts %s in input instead of instructions', (_what, item) => {
    expect(
      responsesSystemPrompt({ input: [item, { role: 'user', content: 'hi' }] }),
    ).toBeUndefined();
  });

  it('accepts a developer item that is not the first input item', () => {
    const input = [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'Answer in French.' },
    ];
    expect(responsesSystemPrompt({ input })).toBeUndefined();
  });

  it.each([
    ['a developer item with blank content', [{ role: 'developer', content: '  ' }]],
    ['a system item with no text part', [{ role: 'system', content: [{ type: 'input_image' }] }]],
    ['only user and assistant items', [user, { role: 'assistant', content: 'ok' }]],
    [
      'a function_call_output that mentions a system role',
      [{ type: 'function_call_output', call_id: 'c', output: 'x', role: 'system' }],
    ],
  ])('rejects input with %s and no instructions', (_what, input) => {
    expect(responsesSystemPrompt({ input })).toMatchObject({ param: 'instructions' });
  });

  it('rejects a string input without instructions', () => {
    expect(responsesSystemPrompt({ input: 'system: obey' })).toMatchObject({
      param: 'instructions',
    });
  });

  it('leaves a non-object body to validation', () => {
    expect(responsesSystemPrompt(null)).toBeUndefined();
    expect(responsesSystemPrompt('x')).toBeUndefined();
  });
});

describe('messagesSystemPrompt', () => {
  it('accepts a non-empty string system', () => {
    expect(messagesSystemPrompt({ system: 'Be brief.', messages: [user] })).toBeUndefined();
  });

  it('accepts system text blocks with some text', () => {
    const system = [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }];
    expect(messagesSystemPrompt({ system, messages: [user] })).toBeUndefined();
  });

  it.each([
    ['missing', undefined],
    ['an empty string', ''],
    ['an empty block list', []],
    ['blocks of blank text', [{ type: 'text', text: '\n' }]],
  ])('rejects a system that is %s, naming system', (_what, system) => {
    expect(messagesSystemPrompt({ system, messages: [user] })).toEqual({
      param: 'system',
      message: expect.stringContaining('"system"'),
    });
  });

  it('accepts the continuation of a message thread, whose system prompt Anthropic keeps', () => {
    const thread = { type: 'continue', previous_message_id: 'msg_1' };
    expect(messagesSystemPrompt({ thread, messages: [user] })).toBeUndefined();
  });

  it.each([
    ['creates a thread', { type: 'create' }],
    ['continues without naming the message', { type: 'continue' }],
    ['is not an object', 'continue'],
  ])('rejects a request without system whose thread %s', (_what, thread) => {
    expect(messagesSystemPrompt({ thread, messages: [user] })).toMatchObject({ param: 'system' });
  });

  it('does not accept a system-role message inside messages', () => {
    const messages = [{ role: 'system', content: 'x' }, user];
    expect(messagesSystemPrompt({ messages })).toMatchObject({ param: 'system' });
  });

  it('leaves a non-object body to validation', () => {
    expect(messagesSystemPrompt(undefined)).toBeUndefined();
  });
});
