import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { parseForced } from '../../config/protections.config';
import { chatProtections } from './extractors/chat.protections';
import { messagesProtections } from './extractors/messages.protections';
import { responsesProtections } from './extractors/responses.protections';
import {
  defaultInjectionSettings,
  parseInjectionSettings,
} from './prompt-injection/injection-settings';
import { PROMPT_INJECTION_TOOL, stripProtectionTools } from './protection-facts';

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
    expect(stripProtectionTools(legacy, found)).toBe(true);
    expect(legacy.functions).toEqual([{ name: 'lookup', parameters: {} }]);
    expect(legacy.function_call).toEqual({ name: PROMPT_INJECTION_TOOL });
  });

  it('drops functions and function_call when only the protection was there', () => {
    const legacy: Record<string, unknown> = {
      functions: [{ name: PROMPT_INJECTION_TOOL, parameters: SCHEMA }],
      function_call: 'auto',
    };
    expect(stripProtectionTools(legacy, chatProtections.tools(legacy, NAMES))).toBe(true);
    expect(legacy).toEqual({});
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

describe('parseInjectionSettings', () => {
  const defaults = defaultInjectionSettings(0.5);
  const parse = (schema: unknown) =>
    parseInjectionSettings(schema, 'tools[0].parameters', defaults);
  const props = (properties: unknown) => ({ type: 'object', properties });

  it('uses the defaults without a schema or properties', () => {
    expect(parse(undefined)).toEqual(defaults);
    expect(parse({ type: 'object' })).toEqual(defaults);
  });

  it('reads default and const values', () => {
    expect(
      parse(
        props({
          action: { type: 'string', const: 'flag' },
          threshold: { type: 'number', default: 0.8 },
          scan: { type: 'string', default: 'tool_results, documents' },
        }),
      ),
    ).toEqual({ action: 'flag', threshold: 0.8, sources: ['tool_result', 'document'] });
    expect(parse(props({ scan: { default: ['user'] } })).sources).toEqual(['user']);
  });

  it.each([
    ['an unknown setting', { mode: { default: 'x' } }, 'tools[0].parameters.properties.mode'],
    ['a bad action', { action: { default: 'drop' } }, 'tools[0].parameters.properties.action'],
    [
      'a threshold over 1',
      { threshold: { default: 2 } },
      'tools[0].parameters.properties.threshold',
    ],
    [
      'a string threshold',
      { threshold: { default: '0.3' } },
      'tools[0].parameters.properties.threshold',
    ],
    [
      'an unknown scan part',
      { scan: { default: ['user', 'images'] } },
      'tools[0].parameters.properties.scan',
    ],
    ['an empty scan', { scan: { default: [] } }, 'tools[0].parameters.properties.scan'],
  ])('rejects %s with a 400 naming it', (_what, properties, param) => {
    let err: unknown;
    try {
      parse(props(properties));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param, message: expect.stringContaining(param) });
  });
});

describe('stripProtectionTools', () => {
  it('keeps the other tools and tool_choice', () => {
    const body = {
      tools: [WEATHER, { type: 'function', function: { name: PROMPT_INJECTION_TOOL } }],
      tool_choice: 'required',
    };
    expect(stripProtectionTools(body, chatProtections.tools(body, NAMES))).toBe(true);
    expect(body).toEqual({ tools: [WEATHER], tool_choice: 'required' });
  });

  it('removes tools, tool_choice and parallel_tool_calls when no tool remains', () => {
    const body: Record<string, unknown> = {
      model: 'm',
      tools: [{ type: 'function', function: { name: PROMPT_INJECTION_TOOL } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    };
    stripProtectionTools(body, chatProtections.tools(body, NAMES));
    expect(body).toEqual({ model: 'm' });
  });

  it('changes nothing when there is no protection tool', () => {
    const body = { tools: [WEATHER] };
    expect(stripProtectionTools(body, [])).toBe(false);
    expect(body).toEqual({ tools: [WEATHER] });
  });
});

describe('parseForced', () => {
  it('reads the comma list', () => {
    expect(parseForced(undefined)).toEqual([]);
    expect(parseForced(' prompt_injection_protection ')).toEqual([PROMPT_INJECTION_TOOL]);
  });
});
