import { chatLimitFacts } from './chat.limits';

describe('chatLimitFacts', () => {
  it('reads model, caps in preference order, stream flag and counts', () => {
    const facts = chatLimitFacts({
      model: 'gpt-x',
      stream: true,
      max_tokens: 50,
      max_completion_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          name: 'alice',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'found it' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', description: 'Find', parameters: { type: 'object' } },
        },
      ],
    });
    expect(facts).toMatchObject({
      model: 'gpt-x',
      stream: true,
      messagesParam: 'messages',
      messageCount: 4,
      toolCount: 1,
      contentPartCount: 3,
      attachmentCount: 1,
      maxOutput: [
        { param: 'max_completion_tokens', value: 100 },
        { param: 'max_tokens', value: 50 },
      ],
    });
    expect(facts.texts).toEqual([
      'Be brief.',
      'alice',
      'What is this?',
      'lookup',
      '{"q":"x"}',
      'found it',
      'lookup',
      'Find',
      '{"type":"object"}',
    ]);
  });

  it('never reads image bytes as text', () => {
    const facts = chatLimitFacts({
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x'.repeat(10_000) } }] },
      ],
    });
    expect(facts.texts.join('')).toBe('');
    expect(facts.attachmentCount).toBe(1);
  });

  it('treats null caps as not set and keeps invalid values for validation', () => {
    expect(chatLimitFacts({ messages: [], max_tokens: null }).maxOutput).toEqual([]);
    expect(chatLimitFacts({ messages: [], max_tokens: 'many' }).maxOutput).toEqual([
      { param: 'max_tokens', value: 'many' },
    ]);
  });

  it('counts legacy functions as tools and the response schema as prompt text', () => {
    const facts = chatLimitFacts({
      messages: [],
      functions: [{ name: 'f', parameters: {} }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 's', schema: { type: 'object' } },
      },
    });
    expect(facts.toolCount).toBe(1);
    expect(facts.texts).toContain('{"name":"s","schema":{"type":"object"}}');
  });

  it.each([[null], ['text'], [[]], [{ messages: 'nope', tools: 3 }]])(
    'returns empty facts for a malformed body %p instead of throwing',
    (body) => {
      expect(chatLimitFacts(body)).toMatchObject({
        messageCount: 0,
        toolCount: 0,
        texts: [],
        maxOutput: [],
      });
    },
  );

  it('marks web search as input the gateway cannot count', () => {
    const base = { messages: [{ role: 'user', content: 'Hi' }] };
    expect(chatLimitFacts(base).uncountedInput).toBeUndefined();
    expect(chatLimitFacts({ ...base, web_search_options: {} }).uncountedInput).toBe(true);
  });
});
