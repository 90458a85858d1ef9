import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-errors';
import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../../core/canonical';
import { type Json, arr, num, obj, str } from '../../json-access';

/** Responses usage -> canonical (same convention: input includes cached tokens). */
export function responsesUsage(value: unknown): CanonicalUsage {
  const u = obj(value);
  const inputDetails = obj(u.input_tokens_details);
  const usage: CanonicalUsage = {
    inputTokens: num(u.input_tokens) ?? 0,
    outputTokens: num(u.output_tokens) ?? 0,
    cachedInputTokens: num(inputDetails.cached_tokens) ?? 0,
    reasoningTokens: num(obj(u.output_tokens_details).reasoning_tokens) ?? 0,
  };
  const written = num(inputDetails.cache_write_tokens);
  if (written !== undefined) {
    usage.cacheWriteInputTokens = written;
  }
  return usage;
}

const RATE_LIMITED = new Set(['rate_limit_exceeded', 'insufficient_quota']);

/** A stream `error` event or a failed response's `error` as a typed error. */
export function responsesError(value: unknown): GatewayError {
  const error = obj(value);
  const message = str(error.message, 'The upstream response failed.');
  const code = str(error.code, str(error.type, 'upstream_error'));
  return RATE_LIMITED.has(code)
    ? new UpstreamHttpError(429, 'rate_limit', message, { code })
    : new UpstreamHttpError(502, 'server', message, { code });
}

interface OpenItem {
  type: 'reasoning' | 'message' | 'function_call';
  index: number;
  /** Whether any delta was seen (else the `.done` item's content is emitted whole). */
  streamed: boolean;
  summaryIndex: number;
}

/**
 * Responses API stream events -> canonical events. Each reasoning, message and
 * function_call output item becomes one block (other items, such as hosted tool calls,
 * are skipped); reasoning summaries (several parts joined by a blank line) and raw
 * reasoning text become reasoning deltas, and the item's `encrypted_content` (with its
 * id) a `reasoning_encrypted` event. `response.completed`/`incomplete` end the message
 * with the usage; `error` and `response.failed` fail the stream. Pure: one instance per
 * stream.
 */
export class ResponsesStreamDecoder {
  private started = false;
  private stopped = false;
  private next = 0;
  private readonly items = new Map<number, OpenItem>();
  private sawTool = false;

  push(event: Json): CanonicalEvent[] {
    const outputIndex = num(event.output_index) ?? -1;
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        return this.start(obj(event.response));
      case 'response.output_item.added':
        return [...this.start({}), ...this.itemAdded(outputIndex, obj(event.item))];
      case 'response.reasoning_summary_part.added': {
        const item = this.items.get(outputIndex);
        if (item && (num(event.summary_index) ?? 0) > 0 && item.streamed) {
          return [{ type: 'reasoning_delta', index: item.index, text: '\n\n' }];
        }
        return [];
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return this.delta(outputIndex, 'reasoning', (index, text) => ({
          type: 'reasoning_delta',
          index,
          text,
        }))(event.delta);
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return this.delta(outputIndex, 'message', (index, text) => ({
          type: 'text_delta',
          index,
          text,
        }))(event.delta);
      case 'response.function_call_arguments.delta':
        return this.delta(outputIndex, 'function_call', (index, json) => ({
          type: 'tool_arguments_delta',
          index,
          json,
        }))(event.delta);
      case 'response.output_item.done':
        return this.itemDone(outputIndex, obj(event.item));
      case 'response.completed':
      case 'response.incomplete':
        return this.finish(obj(event.response));
      case 'response.failed':
        throw responsesError(obj(event.response).error);
      case 'error':
        throw responsesError(event.error ?? event);
      default:
        // Part added/done, `.done` text events and hosted-tool progress carry nothing new.
        return [];
    }
  }

  /** The upstream body ended: a stream without its terminal event is a failure. */
  end(): CanonicalEvent[] {
    if (!this.stopped) {
      throw new GatewayError(
        502,
        'server',
        'The upstream stream ended before the response completed.',
        {
          code: 'stream_incomplete',
        },
      );
    }
    return [];
  }

  private start(response: Json): CanonicalEvent[] {
    if (this.started) {
      return [];
    }
    this.started = true;
    return [
      {
        type: 'message_start',
        id: str(response.id),
        model: str(response.model),
        created: num(response.created_at) ?? Math.floor(Date.now() / 1000),
      },
    ];
  }

  private itemAdded(outputIndex: number, item: Json): CanonicalEvent[] {
    const type = item.type;
    if (type !== 'reasoning' && type !== 'message' && type !== 'function_call') {
      return [];
    }
    const open: OpenItem = { type, index: this.next++, streamed: false, summaryIndex: 0 };
    this.items.set(outputIndex, open);
    if (type === 'function_call') {
      this.sawTool = true;
      return [
        {
          type: 'block_start',
          index: open.index,
          block: {
            kind: 'tool_call',
            id: str(item.call_id),
            name: str(item.name),
          },
        },
      ];
    }
    return [
      {
        type: 'block_start',
        index: open.index,
        block: { kind: type === 'reasoning' ? 'reasoning' : 'text' },
      },
    ];
  }

  private delta(
    outputIndex: number,
    type: OpenItem['type'],
    make: (index: number, text: string) => CanonicalEvent,
  ): (text: unknown) => CanonicalEvent[] {
    return (text) => {
      const item = this.items.get(outputIndex);
      if (item?.type !== type || typeof text !== 'string' || text === '') {
        return [];
      }
      item.streamed = true;
      return [make(item.index, text)];
    };
  }

  private itemDone(outputIndex: number, item: Json): CanonicalEvent[] {
    const open = this.items.get(outputIndex);
    if (!open) {
      return [];
    }
    this.items.delete(outputIndex);
    const out: CanonicalEvent[] = [];
    const index = open.index;
    if (!open.streamed) {
      // An item that arrived whole (or a non-streamed response): its content at once.
      const text = itemText(item);
      if (text !== '') {
        out.push(
          open.type === 'reasoning'
            ? { type: 'reasoning_delta', index, text }
            : open.type === 'message'
              ? { type: 'text_delta', index, text }
              : { type: 'tool_arguments_delta', index, json: text },
        );
      }
    }
    if (open.type === 'reasoning' && typeof item.encrypted_content === 'string') {
      const event: CanonicalEvent = {
        type: 'reasoning_encrypted',
        index,
        data: item.encrypted_content,
      };
      if (typeof item.id === 'string') {
        event.itemId = item.id;
      }
      out.push(event);
    }
    out.push({ type: 'block_stop', index });
    return out;
  }

  private finish(response: Json): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    const out = this.start(response);
    // Items still open (never `done`) end here, so every block is closed.
    for (const outputIndex of [...this.items.keys()]) {
      const item = arr(response.output)[outputIndex] ?? {};
      out.push(...this.itemDone(outputIndex, item));
    }
    this.stopped = true;
    let finish: FinishReason = this.sawTool ? 'tool_calls' : 'stop';
    if (response.status === 'incomplete') {
      finish =
        obj(response.incomplete_details).reason === 'content_filter' ? 'content_filter' : 'length';
    }
    out.push({ type: 'message_stop', finishReason: finish, usage: responsesUsage(response.usage) });
    return out;
  }
}

/** The visible content of a finished output item. */
function itemText(item: Json): string {
  switch (item.type) {
    case 'reasoning': {
      const summary = arr(item.summary).map((s) => str(s.text));
      if (summary.length > 0) {
        return summary.join('\n\n');
      }
      return arr(item.content)
        .map((c) => str(c.text))
        .join('');
    }
    case 'message':
      return arr(item.content)
        .map((c) => str(c.type === 'refusal' ? c.refusal : c.text))
        .join('');
    case 'function_call':
      return str(item.arguments);
    default:
      return '';
  }
}

/** A whole (non-streamed) response object as the canonical events it adds up to. */
export function fromResponseObject(response: Json): CanonicalEvent[] {
  if (response.status === 'failed') {
    throw responsesError(response.error);
  }
  const decoder = new ResponsesStreamDecoder();
  const events = decoder.push({ type: 'response.created', response });
  arr(response.output).forEach((item, i) => {
    events.push(...decoder.push({ type: 'response.output_item.added', output_index: i, item }));
    events.push(...decoder.push({ type: 'response.output_item.done', output_index: i, item }));
  });
  events.push(...decoder.push({ type: 'response.completed', response }));
  return events;
}
