import { responsesProtections } from './responses.protections';
import { PROMPT_INJECTION_TOOL } from '../../policy/protections/protection-facts';

const NAMES = [PROMPT_INJECTION_TOOL];
const SCHEMA = { type: 'object', properties: { action: { type: 'string', default: 'flag' } } };

describe('responsesProtections', () => {
  it('reads a string input as one user part', () => {
    expect(responsesProtections.parts({ input: 'hello' })).toEqual([
      { source: 'user', text: 'hello', where: 'input' },
    ]);
  });

  it('reads user messages and function_call_output items', () => {
    const body = {
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'tool says' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }] },
      ],
    };
    expect(responsesProtections.parts(body)).toEqual([
      { source: 'user', text: 'q', where: 'input[0]' },
      { source: 'tool_result', text: 'tool says', where: 'input[2] (function_call_output)' },
    ]);
  });

  it('finds the tool and tool_choice names', () => {
    const body = {
      tools: [{ type: 'function', name: PROMPT_INJECTION_TOOL, parameters: SCHEMA }],
      tool_choice: { type: 'function', name: PROMPT_INJECTION_TOOL },
    };
    expect(responsesProtections.tools(body, NAMES)[0]).toMatchObject({
      index: 0,
      schemaParam: 'tools[0].parameters',
    });
    expect(responsesProtections.toolChoiceNames(body)).toEqual([PROMPT_INJECTION_TOOL]);
  });
});
