import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { validateResponsesRequest } from './responses-request.validation';

const OK = { model: 'gpt-x', instructions: 'Be terse.', input: 'hi' };

function rejection(body: unknown): InvalidRequestError {
  try {
    validateResponsesRequest(body);
  } catch (e) {
    return e as InvalidRequestError;
  }
  throw new Error('expected a validation error');
}

describe('validateResponsesRequest', () => {
  it('returns the client object itself, unknown fields kept', () => {
    const body = {
      ...OK,
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', parsed_arguments: null },
        {
          type: 'function_call_output',
          call_id: 'c',
          output: [{ type: 'input_text', text: 'ok' }],
        },
        { type: 'reasoning', summary: [], encrypted_content: 'x' },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'a', annotations: [], parsed: null }],
        },
        { role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] },
      ],
      tools: [
        { type: 'function', name: 'f', parameters: null, strict: null },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] },
      reasoning: { effort: 'minimal', summary: null },
      include: ['reasoning.encrypted_content'],
      text: { format: { type: 'json_schema', name: 's', schema: {} } },
      store: false,
      vendor_extension: { a: 1 },
    };
    expect(validateResponsesRequest(body)).toBe(body);
  });

  it.each([
    ['model', { input: 'x' }],
    ['model', { ...OK, model: '' }],
    ['input', { model: 'm' }],
    ['input', { ...OK, input: 42 }],
    ['input[0]', { ...OK, input: ['text'] }],
    ['input[0].type', { ...OK, input: [{ content: 'no role, no type' }] }],
    ['input[0].role', { ...OK, input: [{ role: 'tool', content: 'x' }] }],
    ['input[0].content', { ...OK, input: [{ role: 'user' }] }],
    ['input[0].content', { ...OK, input: [{ role: 'user', content: 7 }] }],
    ['input[0].content[0]', { ...OK, input: [{ role: 'user', content: [{ text: 'x' }] }] }],
    [
      'input[0].content[0].text',
      { ...OK, input: [{ role: 'user', content: [{ type: 'input_text', text: 5 }] }] },
    ],
    [
      'input[0].content[0].image_url',
      {
        ...OK,
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: { url: 'x' } }] }],
      },
    ],
    [
      'input[1].call_id',
      {
        ...OK,
        input: [
          { role: 'user', content: 'x' },
          { type: 'function_call', name: 'f', arguments: '{}' },
        ],
      },
    ],
    [
      'input[0].arguments',
      { ...OK, input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: { a: 1 } }] },
    ],
    ['input[0].output', { ...OK, input: [{ type: 'function_call_output', call_id: 'c' }] }],
    ['input[0].summary', { ...OK, input: [{ type: 'reasoning', id: 'rs_1' }] }],
    ['input[0].type', { ...OK, input: [{ type: 3 }] }],
    ['instructions', { ...OK, instructions: ['x'] }],
    ['stream', { ...OK, stream: 'yes' }],
    ['max_output_tokens', { ...OK, max_output_tokens: 0 }],
    ['temperature', { ...OK, temperature: 3 }],
    ['top_p', { ...OK, top_p: -1 }],
    ['tools', { ...OK, tools: {} }],
    ['tools[0]', { ...OK, tools: ['f'] }],
    ['tools[0].name', { ...OK, tools: [{ type: 'function', parameters: {} }] }],
    ['tools[0].parameters', { ...OK, tools: [{ type: 'function', name: 'f', parameters: 'x' }] }],
    ['tool_choice', { ...OK, tool_choice: 'any' }],
    ['tool_choice', { ...OK, tool_choice: { name: 'f' } }],
    ['tool_choice.name', { ...OK, tool_choice: { type: 'function' } }],
    ['reasoning', { ...OK, reasoning: 'high' }],
    ['reasoning.effort', { ...OK, reasoning: { effort: 'extreme' } }],
    ['reasoning.summary', { ...OK, reasoning: { summary: 'verbose' } }],
    ['include', { ...OK, include: 'reasoning.encrypted_content' }],
    ['include', { ...OK, include: [1] }],
    ['metadata', { ...OK, metadata: 'x' }],
    ['store', { ...OK, store: 'no' }],
    ['previous_response_id', { ...OK, previous_response_id: 5 }],
    ['text', { ...OK, text: 'plain' }],
  ])('rejects with a 400 naming %s', (param, body) => {
    const e = rejection(body);
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect(e.status).toBe(400);
    expect(e.param).toBe(param);
    expect(e.message).toContain(param);
  });

  it('says a required field is missing, and a present one is invalid', () => {
    expect(rejection({ model: 'm' }).message).toBe("Missing required parameter: 'input'.");
    expect(rejection({ ...OK, temperature: 3 }).message).toMatch(
      /^Invalid value for 'temperature'/,
    );
  });

  it.each([
    ['an array', [OK]],
    ['a string', 'hello'],
    ['null', null],
  ])('rejects a body that is %s', (_what, body) => {
    expect(rejection(body)).toMatchObject({ status: 400, param: null, code: 'invalid_json' });
  });

  it('accepts nulls where the API types allow them', () => {
    const body = {
      ...OK,
      stream: null,
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      tool_choice: null,
      reasoning: null,
      text: null,
      include: null,
      metadata: null,
      store: null,
      previous_response_id: null,
      parallel_tool_calls: null,
    };
    expect(validateResponsesRequest(body)).toBe(body);
  });

  it('ignores an own __proto__ key instead of letting it replace the prototype', () => {
    const body = JSON.parse('{"model":"m","input":"x","__proto__":{"polluted":true}}') as object;
    expect(validateResponsesRequest(body)).toBe(body);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
