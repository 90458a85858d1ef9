import { messagesSystemPrompt } from './messages.system-prompt';

const user = { role: 'user', content: 'hi' };

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
