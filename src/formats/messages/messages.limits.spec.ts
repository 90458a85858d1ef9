import { messagesLimitFacts } from './messages.limits';

describe('messagesLimitFacts', () => {
  it('reads system blocks, message blocks, tools and max_tokens', () => {
    const facts = messagesLimitFacts({
      model: 'claude-x',
      max_tokens: 1024,
      stream: true,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(5000) },
            },
            {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: 'doc text' },
            },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'tool_use', id: 't1', name: 'lookup', input: { q: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'found' }] },
          ],
        },
      ],
      tools: [
        { name: 'lookup', description: 'Find', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
    });
    expect(facts).toMatchObject({
      model: 'claude-x',
      stream: true,
      messagesParam: 'messages',
      messageCount: 3,
      toolCount: 2,
      attachmentCount: 1,
      contentPartCount: 1 + 3 + 3 + 1 + 1,
      maxOutput: [{ param: 'max_tokens', value: 1024 }],
    });
    expect(facts.texts).toEqual([
      'Be brief.',
      'Describe',
      'doc text',
      'hmm',
      'lookup',
      '{"q":1}',
      'found',
      'lookup',
      'Find',
      '{"type":"object"}',
      '{"type":"web_search_20250305","name":"web_search"}',
    ]);
  });

  it('reads string system and string content', () => {
    const facts = messagesLimitFacts({ system: 'S', messages: [{ role: 'user', content: 'U' }] });
    expect(facts).toMatchObject({ texts: ['S', 'U'], messageCount: 1, contentPartCount: 0 });
  });

  it('returns empty facts for a body that is not an object', () => {
    expect(messagesLimitFacts('x')).toMatchObject({ messageCount: 0, messagesParam: 'messages' });
  });

  it('marks a request with server tools as reading input the gateway cannot count', () => {
    const base = { messages: [{ role: 'user', content: 'U' }] };
    expect(
      messagesLimitFacts({ ...base, tools: [{ name: 'f', input_schema: {} }] }).uncountedInput,
    ).toBeUndefined();
    expect(
      messagesLimitFacts({ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
        .uncountedInput,
    ).toBe(true);
  });
});
