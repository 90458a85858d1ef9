import { responsesSystemPrompt } from './responses.system-prompt';

const user = { role: 'user', content: 'hi' };

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
