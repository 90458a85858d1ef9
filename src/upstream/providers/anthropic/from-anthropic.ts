import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-errors';
import { own } from '../../../common/own';
import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../../core/canonical';
import { type Json, arr, num, obj, str } from '../../json-access';

/** Anthropic usage counters (input excludes cache reads and writes). */
export interface AnthropicUsageCounters {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Anthropic usage -> canonical (OpenAI convention: input includes cached tokens). */
export function canonicalUsage(u: AnthropicUsageCounters): CanonicalUsage {
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const cacheWrite = u.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: (u.input_tokens ?? 0) + cacheRead + cacheWrite,
    outputTokens: u.output_tokens ?? 0,
    cachedInputTokens: cacheRead,
    cacheWriteInputTokens: cacheWrite,
  };
}

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'refusal',
  pause_turn: 'pause',
};

export function finishReason(stopReason: unknown): FinishReason {
  return (typeof stopReason === 'string' ? own(FINISH, stopReason) : undefined) ?? 'stop';
}

/** An in-stream `error` event as a typed error (529 overloaded keeps its class). */
export function streamError(value: unknown): GatewayError {
  const error = obj(value);
  const type = str(error.type, 'api_error');
  const message = str(error.message, 'The upstream stream failed.');
  switch (type) {
    case 'overloaded_error':
      return new UpstreamHttpError(529, 'overloaded', message, { code: 'upstream_overloaded' });
    case 'rate_limit_error':
      return new UpstreamHttpError(429, 'rate_limit', message, { code: 'rate_limit_exceeded' });
    case 'invalid_request_error':
      return new UpstreamHttpError(400, 'invalid_request', message);
    default:
      return new UpstreamHttpError(502, 'server', message, { code: 'upstream_error' });
  }
}

export const streamIncomplete = (): GatewayError =>
  new GatewayError(502, 'server', 'The upstream stream ended before the message completed.', {
    code: 'stream_incomplete',
  });

/**
 * Anthropic Messages stream events -> canonical events. Block indexes are kept (Anthropic
 * sends them contiguous and never interleaved); blocks the canonical model has no kind
 * for (server tool use and results) are skipped with their deltas. Usage: input counts
 * from `message_start`, cumulative totals from `message_delta` (null counters keep the
 * earlier values). Pure: one instance per stream, `now` injectable for golden tests.
 */
export class AnthropicStreamDecoder {
  private readonly totals: AnthropicUsageCounters = {};
  /** Wire index -> canonical index (contiguous: skipped blocks take none). */
  private readonly indexes = new Map<number, number>();
  private stopReason: unknown;
  private stopSequence: string | undefined;
  private stopped = false;

  constructor(private readonly now: () => number = () => Math.floor(Date.now() / 1000)) {}

  push(event: Json): CanonicalEvent[] {
    switch (event.type) {
      case 'message_start': {
        const message = obj(event.message);
        this.addUsage(message.usage);
        return [
          {
            type: 'message_start',
            id: str(message.id),
            model: str(message.model),
            created: this.now(),
            inputTokens: canonicalUsage(this.totals).inputTokens,
          },
        ];
      }
      case 'content_block_start': {
        const out = this.blockStart(this.indexes.size, obj(event.content_block));
        if (out.length > 0) {
          this.indexes.set(num(event.index) ?? -1, this.indexes.size);
        }
        return out;
      }
      case 'content_block_delta': {
        const index = this.indexes.get(num(event.index) ?? -1);
        return index === undefined ? [] : this.delta(index, obj(event.delta));
      }
      case 'content_block_stop': {
        const index = this.indexes.get(num(event.index) ?? -1);
        return index === undefined ? [] : [{ type: 'block_stop', index }];
      }
      case 'message_delta': {
        this.addUsage(event.usage);
        const delta = obj(event.delta);
        this.stopReason = delta.stop_reason;
        this.stopSequence =
          typeof delta.stop_sequence === 'string' ? delta.stop_sequence : undefined;
        return [];
      }
      case 'message_stop':
        return this.stop();
      case 'error':
        throw streamError(event.error);
      default:
        // ping, and event types newer than this translator.
        return [];
    }
  }

  /** The upstream body ended: a stream cut before its message_delta is a failure. */
  end(): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    if (this.stopReason === undefined) {
      throw streamIncomplete();
    }
    return this.stop();
  }

  private stop(): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    this.stopped = true;
    const event: CanonicalEvent = {
      type: 'message_stop',
      finishReason: finishReason(this.stopReason),
      usage: canonicalUsage(this.totals),
    };
    if (this.stopReason === 'stop_sequence' && this.stopSequence !== undefined) {
      event.stopSequence = this.stopSequence;
    }
    return [event];
  }

  private addUsage(value: unknown): void {
    const usage = obj(value);
    for (const key of [
      'input_tokens',
      'output_tokens',
      'cache_creation_input_tokens',
      'cache_read_input_tokens',
    ] as const) {
      const count = num(usage[key]);
      if (count !== undefined) {
        this.totals[key] = count;
      }
    }
  }

  private blockStart(index: number, block: Json): CanonicalEvent[] {
    switch (block.type) {
      case 'text': {
        const out: CanonicalEvent[] = [{ type: 'block_start', index, block: { kind: 'text' } }];
        if (typeof block.text === 'string' && block.text !== '') {
          out.push({ type: 'text_delta', index, text: block.text });
        }
        return out;
      }
      case 'thinking': {
        const out: CanonicalEvent[] = [
          { type: 'block_start', index, block: { kind: 'reasoning' } },
        ];
        if (typeof block.thinking === 'string' && block.thinking !== '') {
          out.push({ type: 'reasoning_delta', index, text: block.thinking });
        }
        if (typeof block.signature === 'string' && block.signature !== '') {
          out.push({ type: 'reasoning_signature', index, signature: block.signature });
        }
        return out;
      }
      case 'redacted_thinking':
        return [
          { type: 'block_start', index, block: { kind: 'reasoning', redacted: true } },
          { type: 'reasoning_encrypted', index, data: str(block.data) },
        ];
      case 'tool_use': {
        const out: CanonicalEvent[] = [
          {
            type: 'block_start',
            index,
            block: { kind: 'tool_call', id: str(block.id), name: str(block.name) },
          },
        ];
        const input = obj(block.input);
        if (Object.keys(input).length > 0) {
          out.push({ type: 'tool_arguments_delta', index, json: JSON.stringify(input) });
        }
        return out;
      }
      default:
        return [];
    }
  }

  private delta(index: number, delta: Json): CanonicalEvent[] {
    switch (delta.type) {
      case 'text_delta':
        return [{ type: 'text_delta', index, text: str(delta.text) }];
      case 'thinking_delta':
        return [{ type: 'reasoning_delta', index, text: str(delta.thinking) }];
      case 'signature_delta':
        return [{ type: 'reasoning_signature', index, signature: str(delta.signature) }];
      case 'input_json_delta': {
        const json = str(delta.partial_json);
        return json === '' ? [] : [{ type: 'tool_arguments_delta', index, json }];
      }
      default:
        // citations_delta and newer delta types carry nothing canonical.
        return [];
    }
  }
}

/** A whole (non-streamed) Messages `message` as the canonical events it adds up to. */
export function fromAnthropicMessage(message: Json, now?: () => number): CanonicalEvent[] {
  const decoder = new AnthropicStreamDecoder(now);
  const events = decoder.push({
    type: 'message_start',
    message: { ...message, usage: message.usage },
  });
  const content = arr(message.content);
  content.forEach((block, wire) => {
    const start = decoder.push({ type: 'content_block_start', index: wire, content_block: block });
    if (start.length === 0) {
      return;
    }
    events.push(...start);
    const index = (start[0] as { index: number }).index;
    // The start event carried the whole input already, or nothing for `{}`.
    if (block.type === 'tool_use' && !start.some((e) => e.type === 'tool_arguments_delta')) {
      events.push({ type: 'tool_arguments_delta', index, json: '{}' });
    }
    events.push(...decoder.push({ type: 'content_block_stop', index: wire }));
  });
  decoder.push({
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    usage: message.usage,
  });
  events.push(...decoder.push({ type: 'message_stop' }));
  return events;
}
