import { own } from '../../../common/own';
import {
  GatewayError,
  UpstreamHttpError,
  kindForStatus,
} from '../../../common/errors/gateway-errors';
import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../../core/canonical';
import { type Json, arr, num, obj, str } from '../../json-access';

/** Chat usage -> canonical (same convention: prompt tokens include cached ones). */
export function chatUsage(value: unknown): CanonicalUsage {
  const u = obj(value);
  const details = obj(u.prompt_tokens_details);
  const usage: CanonicalUsage = {
    inputTokens: num(u.prompt_tokens) ?? 0,
    outputTokens: num(u.completion_tokens) ?? 0,
    cachedInputTokens: num(details.cached_tokens) ?? 0,
    reasoningTokens: num(obj(u.completion_tokens_details).reasoning_tokens) ?? 0,
  };
  const written = num(details.cache_write_tokens);
  if (written !== undefined) {
    usage.cacheWriteInputTokens = written;
  }
  return usage;
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** An error object inside a stream (`data: {"error": {...}}`) as a typed error. */
export function chatStreamError(value: unknown): GatewayError {
  const error = obj(value);
  const message = str(error.message, 'The upstream stream failed.');
  const code = typeof error.code === 'string' ? error.code : null;
  if (code === 'rate_limit_exceeded' || error.type === 'rate_limit_error') {
    return new UpstreamHttpError(429, kindForStatus(429), message, { code: 'rate_limit_exceeded' });
  }
  return new UpstreamHttpError(502, 'server', message, { code: code ?? 'upstream_error' });
}

type Open = { kind: 'text' | 'reasoning'; index: number } | { kind: 'tool'; index: number };

/**
 * Chat completion chunks -> canonical events. Text, reasoning (`reasoning_content`, or
 * `reasoning` as some compatible servers name it) and each tool call (by its `index`)
 * become blocks, one after another; a tool call's first fragment carries id and name.
 * The usage chunk comes after the finish chunk, so `message_stop` is emitted at `end()`.
 * Pure: one instance per stream.
 */
export class ChatStreamDecoder {
  private started = false;
  private open: Open | undefined;
  private next = 0;
  /** Upstream tool-call index -> canonical block index. */
  private readonly tools = new Map<number, number>();
  private finish: FinishReason | undefined;
  private usage: CanonicalUsage | undefined;
  private sawTool = false;

  push(chunk: Json): CanonicalEvent[] {
    if (chunk.error) {
      throw chatStreamError(chunk.error);
    }
    const out: CanonicalEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'message_start',
        id: str(chunk.id),
        model: str(chunk.model),
        created: num(chunk.created) ?? Math.floor(Date.now() / 1000),
      });
    }
    if (chunk.usage) {
      this.usage = chatUsage(chunk.usage);
    }
    const choice = arr(chunk.choices).find((c) => (num(c.index) ?? 0) === 0);
    if (!choice) {
      return out;
    }
    const delta = obj(choice.delta);
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') {
      const index = this.ensure('reasoning', out);
      out.push({ type: 'reasoning_delta', index, text: reasoning });
    }
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text === 'string' && text !== '') {
        out.push({ type: 'text_delta', index: this.ensure('text', out), text });
      }
    }
    for (const call of arr(delta.tool_calls)) {
      out.push(...this.toolDelta(call));
    }
    if (typeof choice.finish_reason === 'string') {
      this.finish = own(FINISH, choice.finish_reason) ?? 'stop';
      out.push(...this.close());
    }
    return out;
  }

  /** The stream ended (`[DONE]` or end of body). */
  end(): CanonicalEvent[] {
    if (!this.started || this.finish === undefined) {
      throw new GatewayError(
        502,
        'server',
        'The upstream stream ended before the answer finished.',
        {
          code: 'stream_incomplete',
        },
      );
    }
    const finish = this.finish === 'stop' && this.sawTool ? 'tool_calls' : this.finish;
    return [
      ...this.close(),
      { type: 'message_stop', finishReason: finish, usage: this.usage ?? chatUsage(undefined) },
    ];
  }

  private close(): CanonicalEvent[] {
    if (!this.open) {
      return [];
    }
    const index = this.open.index;
    this.open = undefined;
    return [{ type: 'block_stop', index }];
  }

  /** The index of the open block of `kind`, opening it (events into `out`) when needed. */
  private ensure(kind: 'text' | 'reasoning', out: CanonicalEvent[]): number {
    if (this.open?.kind === kind) {
      return this.open.index;
    }
    out.push(...this.close());
    this.open = { kind, index: this.next++ };
    out.push({ type: 'block_start', index: this.open.index, block: { kind } });
    return this.open.index;
  }

  private toolDelta(call: Json): CanonicalEvent[] {
    const upstreamIndex = num(call.index) ?? 0;
    const fn = obj(call.function);
    const out: CanonicalEvent[] = [];
    let index = this.tools.get(upstreamIndex);
    if (index === undefined) {
      out.push(...this.close());
      index = this.next++;
      this.tools.set(upstreamIndex, index);
      this.open = { kind: 'tool', index };
      this.sawTool = true;
      out.push({
        type: 'block_start',
        index,
        block: {
          kind: 'tool_call',
          id: str(call.id, `call_${index}`),
          name: str(fn.name),
        },
      });
    }
    const args = str(fn.arguments);
    if (args !== '') {
      out.push({ type: 'tool_arguments_delta', index, json: args });
    }
    return out;
  }
}

/** A whole `chat.completion` as the canonical events it adds up to. */
export function fromChatCompletion(completion: Json): CanonicalEvent[] {
  const choice = arr(completion.choices)[0] ?? {};
  const message = obj(choice.message);
  const decoder = new ChatStreamDecoder();
  const events = decoder.push({
    id: completion.id,
    model: completion.model,
    created: completion.created,
    choices: [
      {
        index: 0,
        delta: {
          reasoning_content: message.reasoning_content ?? message.reasoning,
          content: message.content,
          refusal: message.refusal,
          tool_calls: arr(message.tool_calls).map((c, i) => ({ ...c, index: i })),
        },
        finish_reason: choice.finish_reason ?? 'stop',
      },
    ],
    usage: completion.usage,
  });
  events.push(...decoder.end());
  return events;
}
