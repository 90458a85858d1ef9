import { chatProtections } from './chat.protections';
import {
  PROMPT_INJECTION_TOOL,
  withoutProtectionTools,
} from '../../policy/protections/protection-facts';

const NAMES = [PROMPT_INJECTION_TOOL];
const SCHEMA = { type: 'object', properties: { action: { type: 'string', default: 'flag' } } };
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: {} } };

describe('chatProtections', () => {
  const body = {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url' }] },
      { role: 'assistant', content: null, tool_calls: [] },
      { role: 'tool', tool_call_id: 'c', content: 'result text' },
      { role: 'user', content: 'b' },
    ],
    tools: [
      WEATHER,
      { type: 'function', function: { name: PROMPT_INJECTION_TOOL, parameters: SCHEMA } },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  };

  it('finds the protection tool with its schema path', () => {
    expect(chatProtections.tools(body, NAMES)).toEqual([
      {
        name: PROMPT_INJECTION_TOOL,
        index: 1,
        schemaParam: 'tools[1].function.parameters',
        schema: SCHEMA,
        description: undefined,
        descriptionParam: 'tools[1].function.description',
      },
    ]);
  });

  it('finds a protection in the legacy functions field, and a function_call naming it', () => {
    const legacy = {
      messages: body.messages,
      functions: [
        { name: 'lookup', parameters: {} },
        { name: PROMPT_INJECTION_TOOL, description: 'policy', parameters: SCHEMA },
      ],
      function_call: { name: PROMPT_INJECTION_TOOL },
    };
    expect(chatProtections.tools(legacy, NAMES)).toEqual([
      {
        name: PROMPT_INJECTION_TOOL,
        field: 'functions',
        index: 1,
        schemaParam: 'functions[1].parameters',
        schema: SCHEMA,
        description: 'policy',
        descriptionParam: 'functions[1].description',
      },
    ]);
    expect(chatProtections.toolChoiceNames(legacy)).toEqual([PROMPT_INJECTION_TOOL]);
    const found = chatProtections.tools(legacy, NAMES);
    const stripped = withoutProtectionTools(legacy, found);
    expect(stripped?.functions).toEqual([{ name: 'lookup', parameters: {} }]);
    expect(stripped?.function_call).toEqual({ name: PROMPT_INJECTION_TOOL });
  });

  it('drops functions and function_call when only the protection was there', () => {
    const legacy: Record<string, unknown> = {
      functions: [{ name: PROMPT_INJECTION_TOOL, parameters: SCHEMA }],
      function_call: 'auto',
    };
    expect(withoutProtectionTools(legacy, chatProtections.tools(legacy, NAMES))).toEqual({});
  });

  it('lists user turns and tool results with where they are', () => {
    expect(chatProtections.parts(body)).toEqual([
      { source: 'user', text: 'a', where: 'messages[1]' },
      { source: 'tool_result', text: 'result text', where: 'messages[3] (tool result)' },
      { source: 'user', text: 'b', where: 'messages[4]' },
    ]);
  });

  it('reads the names tool_choice names', () => {
    expect(chatProtections.toolChoiceNames(body)).toEqual(['get_weather']);
    expect(chatProtections.toolChoiceNames({ tool_choice: 'auto' })).toEqual([]);
  });

  it.each([null, 'x', { tools: 'no' }, { messages: [null, 3] }])('never throws on %p', (b) => {
    expect(chatProtections.tools(b, NAMES)).toEqual([]);
    expect(chatProtections.parts(b)).toEqual([]);
    expect(chatProtections.toolChoiceNames(b)).toEqual([]);
  });
});
