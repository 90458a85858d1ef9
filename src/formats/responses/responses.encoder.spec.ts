import { checkResponseStream } from '../../../test/support/responses-fixtures';
import { GatewayError, UpstreamConnectionError } from '../../common/errors/gateway-errors';
import type { CanonicalEvent, CanonicalUsage } from '../../core/canonical';
import { ResponseAccumulator } from '../../core/accumulate';
import type { ResponsesRequestDto } from './responses-request.dto';
import {
  ResponsesStreamEncoder,
  type ResponsesEncoderOptions,
  toResponseObject,
} from './responses.encoder';

const USAGE: CanonicalUsage = {
  inputTokens: 100,
  outputTokens: 40,
  cachedInputTokens: 60,
  reasoningTokens: 12,
};

/** Reasoning, text, then a tool call: every item kind a Responses client may see. */
const STREAM: CanonicalEvent[] = [
  { type: 'message_start', id: 'abc123', model: 'upstream-model', created: 1_700_000_000 },
  { type: 'block_start', index: 0, block: { kind: 'reasoning' } },
  { type: 'reasoning_delta', index: 0, text: 'Plan' },
  { type: 'reasoning_delta', index: 0, text: ' it.' },
  { type: 'reasoning_signature', index: 0, signature: 'sig-1' },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Let me' },
  { type: 'text_delta', index: 1, text: ' check' },
  { type: 'block_stop', index: 1 },
  {
    type: 'block_start',
    index: 2,
    block: { kind: 'tool_call', id: 'call_1', name: 'get_weather' },
  },
  { type: 'tool_arguments_delta', index: 2, json: '{"city":' },
  { type: 'tool_arguments_delta', index: 2, json: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE },
];

const REQUEST = {
  model: 'public-gpt',
  input: 'weather?',
  instructions: 'Be terse.',
  reasoning: { effort: 'low', summary: 'auto' },
  include: ['reasoning.encrypted_content'],
  tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }],
} as ResponsesRequestDto;

function options(request: Partial<ResponsesRequestDto> = REQUEST): ResponsesEncoderOptions {
  let n = 0;
  return {
    model: 'public-gpt',
    request: request as ResponsesRequestDto,
    newId: (prefix) => `${prefix}${++n}`,
    now: () => 1_700_000_100,
  };
}

function encodeAll(encoder: ResponsesStreamEncoder, events: CanonicalEvent[]) {
  return events.flatMap((e) => encoder.encode(e));
}

const SHELL = {
  id: 'resp_abc123',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'in_progress',
  background: false,
  completed_at: null,
  error: null,
  incomplete_details: null,
  instructions: 'Be terse.',
  max_output_tokens: null,
  model: 'public-gpt',
  output: [],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: 'low', summary: 'auto' },
  store: true, // the request leaves `store` unset: true, as OpenAI echoes it
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: REQUEST.tools,
  top_p: 1,
  truncation: 'disabled',
  usage: null,
  metadata: {},
};

const REASONING_ITEM = {
  id: 'rs_1',
  type: 'reasoning',
  summary: [{ type: 'summary_text', text: 'Plan it.' }],
  encrypted_content: 'gwant1.sig.sig-1',
};
const MESSAGE_ITEM = {
  id: 'msg_2',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'Let me check', annotations: [], logprobs: [] }],
};
const CALL_ITEM = {
  id: 'fc_3',
  type: 'function_call',
  status: 'completed',
  call_id: 'call_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
};
const WIRE_USAGE = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 60 },
  output_tokens: 40,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 140,
};

describe('ResponsesStreamEncoder', () => {
  it('encodes reasoning with a summary, text and a tool call in the 3.6 event order (golden)', () => {
    const events = encodeAll(new ResponsesStreamEncoder(options()), STREAM);
    const rs = { item_id: 'rs_1', output_index: 0 };
    const msg = { item_id: 'msg_2', output_index: 1, content_index: 0 };
    const fc = { item_id: 'fc_3', output_index: 2 };
    const emptyText = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const expected = [
      ['response.created', { response: SHELL }],
      ['response.in_progress', { response: SHELL }],
      [
        'response.output_item.added',
        { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      ],
      [
        'response.reasoning_summary_part.added',
        { ...rs, summary_index: 0, part: { type: 'summary_text', text: '' } },
      ],
      ['response.reasoning_summary_text.delta', { ...rs, summary_index: 0, delta: 'Plan' }],
      ['response.reasoning_summary_text.delta', { ...rs, summary_index: 0, delta: ' it.' }],
      ['response.reasoning_summary_text.done', { ...rs, summary_index: 0, text: 'Plan it.' }],
      [
        'response.reasoning_summary_part.done',
        { ...rs, summary_index: 0, part: { type: 'summary_text', text: 'Plan it.' } },
      ],
      ['response.output_item.done', { output_index: 0, item: REASONING_ITEM }],
      [
        'response.output_item.added',
        {
          output_index: 1,
          item: {
            id: 'msg_2',
            type: 'message',
            role: 'assistant',
            status: 'in_progress',
            content: [],
          },
        },
      ],
      ['response.content_part.added', { ...msg, part: emptyText }],
      ['response.output_text.delta', { ...msg, delta: 'Let me', logprobs: [] }],
      ['response.output_text.delta', { ...msg, delta: ' check', logprobs: [] }],
      ['response.output_text.done', { ...msg, text: 'Let me check', logprobs: [] }],
      ['response.content_part.done', { ...msg, part: { ...emptyText, text: 'Let me check' } }],
      ['response.output_item.done', { output_index: 1, item: MESSAGE_ITEM }],
      [
        'response.output_item.added',
        { output_index: 2, item: { ...CALL_ITEM, status: 'in_progress', arguments: '' } },
      ],
      ['response.function_call_arguments.delta', { ...fc, delta: '{"city":' }],
      ['response.function_call_arguments.delta', { ...fc, delta: '"Paris"}' }],
      [
        'response.function_call_arguments.done',
        { ...fc, name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      ['response.output_item.done', { output_index: 2, item: CALL_ITEM }],
      [
        'response.completed',
        {
          response: {
            ...SHELL,
            status: 'completed',
            completed_at: 1_700_000_100,
            output: [REASONING_ITEM, MESSAGE_ITEM, CALL_ITEM],
            usage: WIRE_USAGE,
          },
        },
      ],
    ].map(([type, payload], i) => ({ type, sequence_number: i, ...(payload as object) }));
    expect(events).toEqual(expected);
    expect(() => checkResponseStream(events)).not.toThrow();
  });

  it('keeps reasoning hidden without reasoning.summary: the item is added and done, summary empty', () => {
    const events = encodeAll(
      new ResponsesStreamEncoder(
        options({ ...REQUEST, reasoning: { effort: 'low' }, include: [] }),
      ),
      STREAM,
    );
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
    ]);
    expect(types.some((t) => t.startsWith('response.reasoning_summary'))).toBe(false);
    expect(events[3]).toMatchObject({ item: { id: 'rs_1', type: 'reasoning', summary: [] } });
    expect(events[3].item).not.toHaveProperty('encrypted_content');
    expect(() => checkResponseStream(events)).not.toThrow();
  });

  it('ends with response.incomplete and the max_output_tokens reason when the answer was cut', () => {
    const cut: CanonicalEvent[] = [
      ...STREAM.slice(0, 1),
      ...STREAM.slice(6, 10),
      { type: 'message_stop', finishReason: 'length', usage: USAGE },
    ];
    const events = encodeAll(new ResponsesStreamEncoder(options()), cut);
    const last = events[events.length - 1];
    expect(last).toMatchObject({
      type: 'response.incomplete',
      response: {
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        completed_at: null,
        output: [{ type: 'message', content: [{ text: 'Let me check' }] }],
      },
    });
    expect(() => checkResponseStream(events)).not.toThrow();
  });

  it('ends a failed stream with error then response.failed, continuing the sequence', () => {
    const encoder = new ResponsesStreamEncoder(options());
    const events = [
      ...encodeAll(encoder, STREAM.slice(0, 8)),
      ...encoder.fail(
        new UpstreamConnectionError('The upstream could not be reached (ECONNRESET).'),
      ),
    ];
    const [error, failed] = events.slice(-2);
    const message = 'The upstream could not be reached (ECONNRESET).';
    expect(error).toEqual({
      type: 'error',
      sequence_number: events.length - 2,
      code: 'upstream_unavailable',
      message,
      param: null,
      error: { type: 'server_error', code: 'upstream_unavailable', message, param: null },
    });
    expect(failed).toMatchObject({
      type: 'response.failed',
      sequence_number: events.length - 1,
      response: {
        id: 'resp_abc123',
        status: 'failed',
        error: { code: 'server_error', message },
        // The finished reasoning item, then the message cut short.
        output: [
          REASONING_ITEM,
          {
            id: 'msg_2',
            status: 'incomplete',
            content: [{ type: 'output_text', text: 'Let me' }],
          },
        ],
      },
    });
    expect(() => checkResponseStream(events)).not.toThrow();
    expect(encoder.encode(STREAM[8])).toEqual([]);
    expect(encoder.end()).toEqual([]);
  });

  it('opens the response before failing when the source failed before its first event', () => {
    const encoder = new ResponsesStreamEncoder(options());
    const events = encoder.fail(new UpstreamConnectionError('down'));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    expect(events[0]).toMatchObject({ response: { id: 'resp_1', model: 'public-gpt' } });
    expect(() => checkResponseStream(events)).not.toThrow();
  });

  it('fails a stream whose source ended without message_stop, and adds nothing after a terminal', () => {
    const cut = new ResponsesStreamEncoder(options());
    const events = [...encodeAll(cut, STREAM.slice(0, 3)), ...cut.end()];
    expect(events[events.length - 1]).toMatchObject({
      type: 'response.failed',
      response: { error: { message: expect.stringContaining('ended before') } },
    });
    const whole = new ResponsesStreamEncoder(options());
    encodeAll(whole, STREAM);
    expect(whole.end()).toEqual([]);
    expect(whole.fail(new UpstreamConnectionError('late'))).toEqual([]);
  });

  it('mints unique item ids by default', () => {
    const events = encodeAll(new ResponsesStreamEncoder({ model: 'm', request: REQUEST }), STREAM);
    const ids = events
      .filter((e) => e.type === 'response.output_item.added')
      .map((e) => (e.item as { id: string }).id);
    expect(ids).toEqual([
      expect.stringMatching(/^rs_[0-9a-f]{24}$/),
      expect.stringMatching(/^msg_[0-9a-f]{24}$/),
      expect.stringMatching(/^fc_[0-9a-f]{24}$/),
    ]);
    expect(new Set(ids).size).toBe(3);
    expect(() => checkResponseStream(events)).not.toThrow();
  });
});

describe('toResponseObject', () => {
  function accumulate(events: CanonicalEvent[]) {
    const acc = new ResponseAccumulator();
    events.forEach((e) => acc.push(e));
    return acc.result();
  }

  it('builds the same final object as the stream terminal event (golden)', () => {
    const body = toResponseObject(accumulate(STREAM), options());
    expect(body).toEqual({
      ...SHELL,
      status: 'completed',
      completed_at: 1_700_000_100,
      output: [REASONING_ITEM, MESSAGE_ITEM, CALL_ITEM],
      usage: WIRE_USAGE,
    });
    const streamed = encodeAll(new ResponsesStreamEncoder(options()), STREAM);
    expect(body).toEqual(streamed[streamed.length - 1].response);
  });

  it('reports a content filter stop as incomplete', () => {
    const body = toResponseObject(
      accumulate([STREAM[0], { type: 'message_stop', finishReason: 'refusal', usage: USAGE }]),
      options(),
    );
    expect(body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
  });

  it('echoes the request settings the API echoes', () => {
    const body = toResponseObject(
      accumulate([STREAM[0], { type: 'message_stop', finishReason: 'stop', usage: USAGE }]),
      options({
        model: 'x',
        input: 'y',
        instructions: 'Rules.',
        max_output_tokens: 64,
        temperature: 0.2,
        top_p: 0.5,
        parallel_tool_calls: false,
        tool_choice: 'none',
        metadata: { team: 'a' },
        text: { format: { type: 'json_object' } },
      }),
    );
    expect(body).toMatchObject({
      instructions: 'Rules.',
      max_output_tokens: 64,
      temperature: 0.2,
      top_p: 0.5,
      parallel_tool_calls: false,
      tool_choice: 'none',
      metadata: { team: 'a' },
      text: { format: { type: 'json_object' } },
      reasoning: { effort: null, summary: null },
      tools: [],
    });
  });
});

describe('a response the gateway stores (keep)', () => {
  const UNASKED = { ...REQUEST, include: [] } as ResponsesRequestDto;

  it('mints its own response id and keeps the reasoning payload the client did not ask for (golden)', () => {
    const kept: unknown[] = [];
    const streamed = encodeAll(
      new ResponsesStreamEncoder({ ...options(UNASKED), keep: (s) => kept.push(s) }),
      STREAM,
    );
    const terminal = streamed[streamed.length - 1].response as Record<string, unknown>;
    const { encrypted_content: _hidden, ...shown } = REASONING_ITEM;
    // Ids: resp_1 first (at message_start), then the items.
    expect(terminal.id).toBe('resp_1');
    expect((terminal.output as unknown[])[0]).toEqual({ ...shown, id: 'rs_2' });
    expect(kept).toEqual([
      {
        ...terminal,
        output: [
          { ...REASONING_ITEM, id: 'rs_2' },
          { ...MESSAGE_ITEM, id: 'msg_3' },
          { ...CALL_ITEM, id: 'fc_4' },
        ],
      },
    ]);
    const storedJson: unknown[] = [];
    const acc = new ResponseAccumulator();
    STREAM.forEach((e) => acc.push(e));
    const json = toResponseObject(acc.result(), {
      ...options(UNASKED),
      keep: (s) => storedJson.push(s),
    });
    expect(json).toEqual(terminal);
    expect(storedJson).toEqual(kept);
  });

  it('keeps nothing for a stream that fails', () => {
    const kept: unknown[] = [];
    const encoder = new ResponsesStreamEncoder({ ...options(), keep: (s) => kept.push(s) });
    encodeAll(encoder, STREAM.slice(0, 4));
    encoder.fail(new GatewayError(502, 'server', 'cut'));
    expect(kept).toEqual([]);
  });
});

describe('namespaced function calls', () => {
  const request = {
    ...REQUEST,
    tools: [
      { type: 'function', name: 'get_weather', parameters: {} },
      {
        type: 'namespace',
        name: 'geo',
        description: 'Places.',
        tools: [{ type: 'function', name: 'get_weather', parameters: {} }],
      },
    ],
  } as ResponsesRequestDto;
  const call = (name: string): CanonicalEvent[] => [
    { type: 'message_start', id: 'abc123', model: 'upstream-model', created: 1_700_000_000 },
    { type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'call_1', name } },
    { type: 'tool_arguments_delta', index: 0, json: '{}' },
    { type: 'block_stop', index: 0 },
    { type: 'message_stop', finishReason: 'tool_calls', usage: USAGE },
  ];

  it('gives a flat name back its namespace, streamed and not (golden)', () => {
    const events = encodeAll(
      new ResponsesStreamEncoder(options(request)),
      call('geo__get_weather'),
    );
    const item = {
      id: 'fc_1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_1',
      namespace: 'geo',
      name: 'get_weather',
      arguments: '{}',
    };
    expect(events.find((e) => e.type === 'response.output_item.added')!.item).toEqual({
      ...item,
      status: 'in_progress',
      arguments: '',
    });
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')!.name).toBe(
      'get_weather',
    );
    expect((events.at(-1)!.response as { output: unknown }).output).toEqual([item]);
    const acc = new ResponseAccumulator();
    call('geo__get_weather').forEach((e) => acc.push(e));
    expect(toResponseObject(acc.result(), options(request)).output).toEqual([item]);
  });

  it('leaves a top-level function as it is', () => {
    const events = encodeAll(new ResponsesStreamEncoder(options(request)), call('get_weather'));
    const [output] = (events.at(-1)!.response as { output: Record<string, unknown>[] }).output;
    expect(output).not.toHaveProperty('namespace');
    expect(output.name).toBe('get_weather');
  });
});
