import { chatSystemPrompt } from './chat.system-prompt';

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
