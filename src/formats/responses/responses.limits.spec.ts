import { responsesLimitFacts } from './responses.limits';

describe('responsesLimitFacts', () => {
  it('counts a string input and instructions as two messages', () => {
    const facts = responsesLimitFacts({
      model: 'gpt-x',
      instructions: 'Be brief.',
      input: 'Hello',
      max_output_tokens: 300,
      stream: true,
    });
    expect(facts).toMatchObject({
      model: 'gpt-x',
      messagesParam: 'input',
      messageCount: 2,
      stream: true,
      texts: ['Be brief.', 'Hello'],
      maxOutput: [{ param: 'max_output_tokens', value: 300 }],
    });
  });

  it('reads message items, tool calls, tool outputs and reasoning summaries', () => {
    const facts = responsesLimitFacts({
      input: [
        { role: 'user', content: 'shorthand item' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
        {
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'thought' }],
          encrypted_content: 'zzz',
        },
        { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'result' },
        { type: 'item_reference', id: 'msg_1' },
      ],
      tools: [
        { type: 'function', name: 'lookup', description: 'Find', parameters: { type: 'object' } },
        { type: 'web_search' },
      ],
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
    });
    expect(facts).toMatchObject({
      messageCount: 6,
      toolCount: 2,
      contentPartCount: 5,
      attachmentCount: 1,
    });
    expect(facts.texts).toEqual([
      'shorthand item',
      'look',
      'thought',
      'lookup',
      '{"q":1}',
      'result',
      'lookup',
      'Find',
      '{"type":"object"}',
      '{"type":"web_search"}',
      '{"type":"object"}',
    ]);
  });

  it('counts a system prompt the same whether it is instructions or a developer item', () => {
    const asInstructions = responsesLimitFacts({ instructions: 'Be brief.', input: 'Hello' });
    const asItem = responsesLimitFacts({
      input: [
        { role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(asItem.texts).toEqual(asInstructions.texts);
    expect(asItem.messageCount).toBe(asInstructions.messageCount);
  });

  it('returns empty facts for a body that is not an object', () => {
    expect(responsesLimitFacts(undefined)).toMatchObject({
      messageCount: 0,
      messagesParam: 'input',
    });
  });

  it('marks input the gateway cannot count: stored state, references, encrypted reasoning, built-in tools', () => {
    expect(responsesLimitFacts({ input: 'Hi' }).uncountedInput).toBeUndefined();
    expect(
      responsesLimitFacts({ input: 'Hi', tools: [{ type: 'custom', name: 'x' }] }).uncountedInput,
    ).toBeUndefined();
    for (const body of [
      { input: 'Hi', previous_response_id: 'resp_1' },
      { input: 'Hi', conversation: 'conv_1' },
      { input: [{ type: 'item_reference', id: 'msg_1' }] },
      { input: [{ type: 'reasoning', summary: [], encrypted_content: 'gAAA' }] },
      { input: 'Hi', tools: [{ type: 'web_search' }] },
    ]) {
      expect(responsesLimitFacts(body).uncountedInput).toBe(true);
    }
  });
});
