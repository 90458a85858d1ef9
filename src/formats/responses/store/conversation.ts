import type { ResponsesInputItem } from '../responses-request.dto';
import type { StoredResponseRow } from './response-store';

/**
 * Pure pieces of the gateway's Responses state: the items a stored response holds, the
 * conversation a `previous_response_id` names, and the ids of a request's own items.
 */

/** A stored response's items, parsed once. */
export interface StoredItems {
  /** The request's own input items. */
  input: ResponsesInputItem[];
  /** The response's output items (reasoning payloads included). */
  output: ResponsesInputItem[];
}

export function itemsOf(row: StoredResponseRow): StoredItems {
  const response = JSON.parse(row.response) as { output?: ResponsesInputItem[] };
  return {
    input: JSON.parse(row.inputItems) as ResponsesInputItem[],
    output: Array.isArray(response.output) ? response.output : [],
  };
}

/**
 * The conversation before a request that continues the last of `chain` (oldest first):
 * each response's input items, then its output items. Instructions are not carried: per
 * OpenAI's rules only the new request's `instructions` apply.
 */
export function historyOf(chain: readonly StoredItems[]): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  for (const { input, output } of chain) {
    items.push(...input, ...output);
  }
  return items;
}

/** Every stored item by id, for `item_reference`s. */
export function itemsById(stored: readonly StoredItems[]): Map<string, ResponsesInputItem> {
  const byId = new Map<string, ResponsesInputItem>();
  for (const { input, output } of stored) {
    for (const item of [...input, ...output]) {
      if (typeof item.id === 'string') {
        byId.set(item.id, item);
      }
    }
  }
  return byId;
}

/** The request's input as items: a string is one user message. */
export function inputItems(input: string | ResponsesInputItem[]): ResponsesInputItem[] {
  return typeof input === 'string'
    ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }]
    : input;
}

/** `input` with each `item_reference` in `byId` replaced by the item it names. */
export function resolveReferences(
  input: readonly ResponsesInputItem[],
  byId: ReadonlyMap<string, ResponsesInputItem>,
): ResponsesInputItem[] {
  return input.map((item) =>
    item.type === 'item_reference' && typeof item.id === 'string'
      ? (byId.get(item.id) ?? item)
      : item,
  );
}

/**
 * Items for an upstream that stores responses itself (OpenAI's Responses API): without the
 * gateway's ids, which it would look up and not find, and without reasoning items, whose
 * payloads it can only read when it made them under its own ids.
 */
export function forStoringUpstream(items: readonly ResponsesInputItem[]): ResponsesInputItem[] {
  const out: ResponsesInputItem[] = [];
  for (const item of items) {
    if (item.type === 'reasoning') {
      continue;
    }
    if (typeof item.id === 'string') {
      const { id: _id, ...rest } = item;
      out.push(rest);
    } else {
      out.push(item);
    }
  }
  return out;
}

const PREFIX = new Map([
  ['message', 'msg_'],
  ['function_call', 'fc_'],
  ['function_call_output', 'fco_'],
  ['reasoning', 'rs_'],
]);

/**
 * The request's own items as stored and listed by `input_items`: each with an id (kept
 * when it has one, else minted by its type as OpenAI's look), messages in the typed form
 * (`type`, content parts, `status`).
 */
export function withItemIds(
  items: readonly ResponsesInputItem[],
  newId: (prefix: string) => string,
): ResponsesInputItem[] {
  return items.map((item) => {
    const type = item.type ?? 'message';
    const id = typeof item.id === 'string' ? item.id : newId(PREFIX.get(type) ?? 'item_');
    if (type !== 'message') {
      return { ...item, id };
    }
    const content =
      typeof item.content === 'string'
        ? [
            {
              type: item.role === 'assistant' ? 'output_text' : 'input_text',
              text: item.content,
            },
          ]
        : item.content;
    return { ...item, id, type: 'message', content, status: item.status ?? 'completed' };
  });
}
