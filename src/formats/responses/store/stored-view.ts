import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import type { ResponsesInputItem } from '../responses-request.dto';
import { ENCRYPTED_REASONING } from '../responses.wire';

/**
 * How a stored response and its input items are shown by `GET /v1/responses/{id}` and
 * `GET /v1/responses/{id}/input_items`, in OpenAI's shapes: reasoning payloads only when
 * `include` asks for them, input items paged as OpenAI pages them.
 */

/** The `include` values of a query (`include=a&include=b` or `include[]=a`). */
export function includesOf(query: URLSearchParams): Set<string> {
  return new Set([...query.getAll('include'), ...query.getAll('include[]')]);
}

/** A stored item as shown: without its reasoning payload unless `include` asks for it. */
function shown<T extends { type?: unknown; encrypted_content?: unknown }>(
  item: T,
  encrypted: boolean,
): T {
  if (encrypted || item.type !== 'reasoning' || item.encrypted_content === undefined) {
    return item;
  }
  const { encrypted_content: _payload, ...rest } = item;
  return rest as T;
}

/** The stored response object as `GET /v1/responses/{id}` returns it. */
export function responseView(stored: string, query: URLSearchParams): Record<string, unknown> {
  const response = JSON.parse(stored) as Record<string, unknown>;
  const encrypted = includesOf(query).has(ENCRYPTED_REASONING);
  if (!encrypted && Array.isArray(response.output)) {
    response.output = (response.output as ResponsesInputItem[]).map((item) => shown(item, false));
  }
  return response;
}

/** OpenAI's list object. */
export interface ItemList {
  object: 'list';
  data: ResponsesInputItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) {
    return 20;
  }
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new InvalidRequestError(
      `Invalid 'limit': integer below minimum value. Expected a value between 1 and 100, but got ${JSON.stringify(raw)} instead.`,
      'limit',
      'invalid_value',
    );
  }
  return limit;
}

function orderOf(query: URLSearchParams): 'asc' | 'desc' {
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') {
    throw new InvalidRequestError(
      `Invalid value for 'order': expected one of 'asc' or 'desc', but got ${JSON.stringify(order)} instead.`,
      'order',
      'invalid_value',
    );
  }
  return order;
}

/** Where a cursor id sits in `items`; the 400 when it names none of them. */
function cursor(items: readonly ResponsesInputItem[], id: string, param: string): number {
  const at = items.findIndex((item) => item.id === id);
  if (at < 0) {
    throw new InvalidRequestError(`No input item with id '${id}' in this response.`, param);
  }
  return at;
}

/**
 * One page of `items` (stored oldest first) for `GET …/input_items`: `order` (default
 * `desc`, newest first), `after` / `before` (item ids, exclusive, in that order), `limit`
 * (1 to 100, default 20), `include` (`reasoning.encrypted_content`).
 */
export function inputItemsPage(
  items: readonly ResponsesInputItem[],
  query: URLSearchParams,
): ItemList {
  const limit = limitOf(query);
  const ordered = orderOf(query) === 'asc' ? items : [...items].reverse();
  let start = 0;
  let end = ordered.length;
  const after = query.get('after');
  if (after !== null) {
    start = cursor(ordered, after, 'after') + 1;
  }
  const before = query.get('before');
  if (before !== null) {
    end = cursor(ordered, before, 'before');
  }
  // With `before` alone, the page is the one just before it.
  const from = before !== null && after === null ? Math.max(start, end - limit) : start;
  const to = Math.max(from, Math.min(end, from + limit));
  const encrypted = includesOf(query).has(ENCRYPTED_REASONING);
  const data = ordered.slice(from, to).map((item) => shown(item, encrypted));
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: before !== null && after === null ? from > start : to < end,
  };
}
