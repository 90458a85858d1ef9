import type { ResponsesInputItem } from '../responses-request.dto';
import {
  forStoringUpstream,
  historyOf,
  inputItems,
  itemsById,
  itemsOf,
  resolveReferences,
  withItemIds,
} from './conversation';

const CALL: ResponsesInputItem = {
  id: 'fc_1',
  type: 'function_call',
  status: 'completed',
  call_id: 'call_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
};
const REASONING: ResponsesInputItem = {
  id: 'rs_1',
  type: 'reasoning',
  summary: [],
  encrypted_content: 'gwant1.sig.abc',
};
const TURN_1 = {
  input: [{ id: 'msg_u1', type: 'message', role: 'user' as const, content: 'weather?' }],
  output: [REASONING, CALL],
};
const TURN_2 = {
  input: [{ id: 'fco_1', type: 'function_call_output', call_id: 'call_1', output: '18C' }],
  output: [
    {
      id: 'msg_a2',
      type: 'message',
      role: 'assistant' as const,
      content: [{ type: 'output_text', text: '18C in Paris.' }],
    },
  ],
};

describe('the conversation a previous_response_id names', () => {
  it('is each stored turn, oldest first: its inputs, then its outputs (golden)', () => {
    expect(historyOf([TURN_1, TURN_2])).toEqual([
      TURN_1.input[0],
      REASONING,
      CALL,
      TURN_2.input[0],
      TURN_2.output[0],
    ]);
  });

  it('reads a stored row once: input items and the response output', () => {
    expect(
      itemsOf({
        id: 'resp_1',
        previousId: null,
        keyId: 'k',
        team: null,
        provider: 'local',
        model: 'm',
        inputItems: JSON.stringify(TURN_1.input),
        response: JSON.stringify({ id: 'resp_1', output: TURN_1.output }),
      }),
    ).toEqual(TURN_1);
  });

  it('replaces references it holds with the items, and leaves the others', () => {
    const byId = itemsById([TURN_1, TURN_2]);
    expect(
      resolveReferences(
        [
          { type: 'item_reference', id: 'fc_1' },
          { type: 'item_reference', id: 'msg_elsewhere' },
          { role: 'user', content: 'next' },
        ],
        byId,
      ),
    ).toEqual([
      CALL,
      { type: 'item_reference', id: 'msg_elsewhere' },
      { role: 'user', content: 'next' },
    ]);
  });

  it('sends a storing upstream the items without the gateway ids and without reasoning', () => {
    expect(forStoringUpstream(historyOf([TURN_1]))).toEqual([
      { type: 'message', role: 'user', content: 'weather?' },
      {
        type: 'function_call',
        status: 'completed',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
    ]);
  });
});

describe("a request's own items as stored", () => {
  it('a string input is one user message', () => {
    expect(inputItems('hi')).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    ]);
  });

  it('get ids by type, keep the ids they had, and messages take the typed form (golden)', () => {
    let n = 0;
    const newId = (prefix: string): string => `${prefix}${++n}`;
    expect(
      withItemIds(
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { type: 'function_call_output', call_id: 'call_1', output: '18C' },
          CALL,
          { type: 'mcp_call', name: 'x' },
        ],
        newId,
      ),
    ).toEqual([
      {
        id: 'msg_1',
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'hi' }],
        status: 'completed',
      },
      {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'hello' }],
        status: 'completed',
      },
      { id: 'fco_3', type: 'function_call_output', call_id: 'call_1', output: '18C' },
      CALL,
      { id: 'item_4', type: 'mcp_call', name: 'x' },
    ]);
  });
});
