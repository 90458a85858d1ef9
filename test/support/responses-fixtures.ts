/**
 * Builders for realistic OpenAI Responses API bodies and event streams (as a fake
 * upstream sends them), and a checker for the stream grammar that openai-node's
 * ResponseStream enforces, v7.5 rules included (wire-formats.md 3.6/3.7).
 */

export type UpstreamItem =
  | { kind: 'reasoning'; summaries: string[] }
  | { kind: 'message'; pieces: string[] }
  | { kind: 'function_call'; name: string; callId: string; pieces: string[] };

export const RESPONSES_USAGE = {
  input_tokens: 84,
  input_tokens_details: { cached_tokens: 16 },
  output_tokens: 94,
  output_tokens_details: { reasoning_tokens: 64 },
  total_tokens: 178,
};

function snapshot(model: string, extra: Record<string, unknown> = {}): Record<string, any> {
  return {
    id: 'resp_up_1',
    object: 'response',
    created_at: 1741290958,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: 'Be terse.',
    max_output_tokens: null,
    model,
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: 'medium', summary: 'detailed' },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: {},
    ...extra,
  };
}

function finalItem(item: UpstreamItem, i: number): Record<string, unknown> {
  switch (item.kind) {
    case 'reasoning':
      return {
        id: `rs_up_${i}`,
        type: 'reasoning',
        summary: item.summaries.map((text) => ({ type: 'summary_text', text })),
      };
    case 'message':
      return {
        id: `msg_up_${i}`,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', annotations: [], logprobs: [], text: item.pieces.join('') },
        ],
      };
    case 'function_call':
      return {
        id: `fc_up_${i}`,
        type: 'function_call',
        status: 'completed',
        arguments: item.pieces.join(''),
        call_id: item.callId,
        name: item.name,
      };
  }
}

/** A non-streamed response object with the given output items. */
export function responsesObject(model: string, items: UpstreamItem[]): Record<string, unknown> {
  return snapshot(model, {
    status: 'completed',
    completed_at: 1741290961,
    output: items.map(finalItem),
    usage: RESPONSES_USAGE,
  });
}

/**
 * The event stream the API sends for these items: lifecycle events, one output item
 * after the other, `response.completed` last; payload key order as captured streams.
 */
export function responsesStream(
  model: string,
  items: UpstreamItem[],
  terminal: 'completed' | 'none' = 'completed',
): Record<string, any>[] {
  const events: Record<string, any>[] = [];
  const push = (type: string, payload: Record<string, unknown>): void => {
    events.push({ type, ...payload, sequence_number: events.length });
  };
  push('response.created', { response: snapshot(model) });
  push('response.in_progress', { response: snapshot(model) });
  items.forEach((item, i) => {
    const final = finalItem(item, i);
    const ref = { item_id: final.id, output_index: i };
    switch (item.kind) {
      case 'reasoning':
        push('response.output_item.added', { item: { ...final, summary: [] }, output_index: i });
        item.summaries.forEach((text, s) => {
          const part = { type: 'summary_text', text };
          push('response.reasoning_summary_part.added', {
            ...ref,
            part: { ...part, text: '' },
            summary_index: s,
          });
          for (const delta of text.match(/.{1,8}/gs) ?? []) {
            push('response.reasoning_summary_text.delta', {
              delta,
              ...ref,
              obfuscation: 'Xy1',
              summary_index: s,
            });
          }
          push('response.reasoning_summary_text.done', { ...ref, summary_index: s, text });
          push('response.reasoning_summary_part.done', { ...ref, part, summary_index: s });
        });
        break;
      case 'message': {
        const text = item.pieces.join('');
        const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
        push('response.output_item.added', {
          item: { ...final, status: 'in_progress', content: [] },
          output_index: i,
        });
        push('response.content_part.added', { content_index: 0, ...ref, part });
        for (const delta of item.pieces) {
          push('response.output_text.delta', { content_index: 0, delta, ...ref, logprobs: [] });
        }
        push('response.output_text.done', { content_index: 0, ...ref, logprobs: [], text });
        push('response.content_part.done', { content_index: 0, ...ref, part: { ...part, text } });
        break;
      }
      case 'function_call':
        push('response.output_item.added', {
          item: { ...final, status: 'in_progress', arguments: '' },
          output_index: i,
        });
        for (const delta of item.pieces) {
          push('response.function_call_arguments.delta', { delta, ...ref });
        }
        push('response.function_call_arguments.done', {
          arguments: item.pieces.join(''),
          ...ref,
        });
        break;
    }
    push('response.output_item.done', { item: final, output_index: i });
  });
  if (terminal === 'completed') {
    push('response.completed', { response: responsesObject(model, items) });
  }
  return events;
}

/** Events as the fake upstream sends them: `event: <type>` + `data: <json>`. */
export function asSse(events: Record<string, any>[]): { event: string; data: object }[] {
  return events.map((e) => ({ event: e.type as string, data: e }));
}

/** Every item of a stream, in order. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) {
    items.push(item);
  }
  return items;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.queued']);
const ITEM_EVENTS: Record<string, string> = {
  'response.content_part.added': 'message',
  'response.content_part.done': 'message',
  'response.output_text.delta': 'message',
  'response.output_text.done': 'message',
  'response.reasoning_summary_part.added': 'reasoning',
  'response.reasoning_summary_part.done': 'reasoning',
  'response.reasoning_summary_text.delta': 'reasoning',
  'response.reasoning_summary_text.done': 'reasoning',
  'response.function_call_arguments.delta': 'function_call',
  'response.function_call_arguments.done': 'function_call',
};

/**
 * Throws on the first rule of the stream grammar an event breaks: `response.created`
 * first, `sequence_number` 0, 1, ...; only known types; items opened in order
 * (`output_index` = current length) in their initial state, one at a time, with a
 * non-empty unique `id` (and `call_id` on function calls); item-scoped events naming
 * the open item's id and type; parts added before their deltas with contiguous
 * indices; `output_item.done` keeping type/id/call_id; exactly one terminal event,
 * last, whose `response.output` holds every item.
 */
export function checkResponseStream(events: any[]): void {
  const fail = (i: number, why: string): never => {
    throw new Error(`event ${i} (${events[i]?.type}): ${why}`);
  };
  if (events[0]?.type !== 'response.created') {
    fail(0, 'the first event must be response.created');
  }
  const output: any[] = [];
  const ids = new Set<string>();
  let open: number | undefined;
  let terminals = 0;
  events.forEach((e, i) => {
    if (e.sequence_number !== i) {
      fail(i, `sequence_number ${e.sequence_number}, expected ${i}`);
    }
    if (terminals > 0) {
      fail(i, 'an event after the terminal event');
    }
    const type: string = e.type;
    if (LIFECYCLE.has(type) || TERMINAL.has(type)) {
      const items: any[] = e.response?.output ?? [];
      if (TERMINAL.has(type)) {
        terminals++;
        if (type !== 'response.failed' && items.length !== output.length) {
          fail(i, `terminal output has ${items.length} items, ${output.length} were streamed`);
        }
        items.forEach((item, k) => {
          if (output[k] && item.id !== output[k].id) {
            fail(i, `terminal output[${k}] has id ${item.id}, streamed ${output[k].id}`);
          }
        });
      } else if (items.length < output.length) {
        fail(i, 'a lifecycle event after items must carry them');
      }
      return;
    }
    if (type === 'error' || type === 'keepalive') {
      return;
    }
    if (type === 'response.output_item.added') {
      const item = e.item;
      if (open !== undefined) {
        fail(i, `item ${open} is still open`);
      }
      if (e.output_index !== output.length) {
        fail(i, `output_index ${e.output_index}, expected ${output.length}`);
      }
      if (typeof item?.id !== 'string' || item.id === '' || ids.has(item.id)) {
        fail(i, `item id ${item?.id} is missing or not unique`);
      }
      if (item.type === 'function_call' && (!item.call_id || item.arguments !== '')) {
        fail(i, 'a function_call needs a call_id and starts with arguments ""');
      }
      if (item.type === 'message' && item.content?.length !== 0) {
        fail(i, 'a message starts with content []');
      }
      if (item.type === 'reasoning' && item.summary?.length !== 0) {
        fail(i, 'a reasoning item starts with summary []');
      }
      ids.add(item.id);
      output.push(structuredClone(item));
      open = e.output_index;
      return;
    }
    if (type === 'response.output_item.done') {
      const before = output[e.output_index];
      if (open !== e.output_index || !before) {
        fail(i, `item ${e.output_index} is not the open one`);
      }
      for (const key of ['type', 'id', 'call_id']) {
        if (before[key] !== e.item[key]) {
          fail(i, `output_item.done changed ${key}`);
        }
      }
      output[e.output_index] = structuredClone(e.item);
      open = undefined;
      return;
    }
    const expectedType = ITEM_EVENTS[type];
    if (expectedType === undefined) {
      fail(i, 'unknown event type');
    }
    const item = output[e.output_index];
    if (!item || e.output_index !== open) {
      fail(i, `missing output at index ${e.output_index}`);
    }
    if (e.item_id !== item.id || item.type !== expectedType) {
      fail(i, `item_id ${e.item_id} does not name the ${expectedType} item ${item.id}`);
    }
    switch (type) {
      case 'response.content_part.added':
        if (e.content_index !== item.content.length) {
          fail(i, `content_index ${e.content_index}, expected ${item.content.length}`);
        }
        item.content.push({ ...e.part });
        return;
      case 'response.reasoning_summary_part.added':
        if (e.summary_index !== item.summary.length) {
          fail(i, `summary_index ${e.summary_index}, expected ${item.summary.length}`);
        }
        item.summary.push({ ...e.part });
        return;
      case 'response.output_text.delta':
        if (item.content[e.content_index]?.type !== 'output_text') {
          fail(i, `missing content at index ${e.content_index}`);
        }
        item.content[e.content_index].text += e.delta;
        return;
      case 'response.reasoning_summary_text.delta':
        if (!item.summary[e.summary_index]) {
          fail(i, `missing summary at index ${e.summary_index}`);
        }
        return;
      case 'response.content_part.done':
      case 'response.output_text.done':
        if (!item.content[e.content_index]) {
          fail(i, `missing content at index ${e.content_index}`);
        }
        return;
      case 'response.reasoning_summary_part.done':
      case 'response.reasoning_summary_text.done':
        if (!item.summary[e.summary_index]) {
          fail(i, `missing summary at index ${e.summary_index}`);
        }
        return;
      default:
        return;
    }
  });
  if (terminals !== 1) {
    fail(events.length - 1, 'the stream must end with exactly one terminal event');
  }
}
