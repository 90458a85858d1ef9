import { messagesProtections } from './messages.protections';
import { PROMPT_INJECTION_TOOL } from '../../policy/protections/protection-facts';

const NAMES = [PROMPT_INJECTION_TOOL];
const SCHEMA = { type: 'object', properties: { action: { type: 'string', default: 'flag' } } };

describe('messagesProtections', () => {
  it('reads user text, tool_result and document blocks separately', () => {
    const body = {
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: [{ type: 'text', text: 'ignored' }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [{ type: 'text', text: 'tool out' }],
            },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } },
            { type: 'text', text: 'then' },
          ],
        },
      ],
    };
    expect(messagesProtections.parts(body)).toEqual([
      { source: 'user', text: 'first', where: 'messages[0]' },
      { source: 'tool_result', text: 'tool out', where: 'messages[2].content[0] (tool result)' },
      { source: 'document', text: 'doc', where: 'messages[2].content[1] (document)' },
      { source: 'user', text: 'then', where: 'messages[2]' },
    ]);
  });

  it('reads search results, documents nested in tool results, and unknown text-carrying blocks', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'search_result',
              source: 'https://x.test',
              title: 't',
              content: [{ type: 'text', text: 'found text' }],
            },
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                {
                  type: 'document',
                  source: { type: 'text', media_type: 'text/plain', data: 'nested doc' },
                },
                { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
              ],
            },
            { type: 'some_future_block', text: 'future text' },
          ],
        },
      ],
    };
    expect(messagesProtections.parts(body)).toEqual([
      { source: 'document', text: 'found text', where: 'messages[0].content[0] (search_result)' },
      { source: 'tool_result', text: 'nested doc', where: 'messages[0].content[1] (tool result)' },
      {
        source: 'document',
        text: 'future text',
        where: 'messages[0].content[2] (some_future_block)',
      },
    ]);
  });

  it('only takes custom tools and reads tool_choice.name', () => {
    const body = {
      tools: [
        { type: 'web_search_20250305', name: PROMPT_INJECTION_TOOL },
        { name: PROMPT_INJECTION_TOOL, input_schema: SCHEMA },
      ],
      tool_choice: { type: 'tool', name: 'x' },
    };
    expect(messagesProtections.tools(body, NAMES).map((t) => t.schemaParam)).toEqual([
      'tools[1].input_schema',
    ]);
    expect(messagesProtections.toolChoiceNames(body)).toEqual(['x']);
  });
});
