import { type Observable, defer, map } from 'rxjs';
import type { SseFrame } from '../../common/sse/sse-writer';
import { endWith, streamIncompleteError } from '../../common/sse/stream-end';
import type { CanonicalUsage } from '../../core/canonical';
import { rewriteModel } from '../chat-completions/chat.passthrough';
import { setOwn } from '../../common/own';

/**
 * Helpers for the Messages fast path: the upstream's events are relayed as text; only
 * `message_start` and `message_delta` are parsed, for usage accounting.
 */

export interface AnthropicUsageWire {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** Anthropic's `input_tokens` excludes cache reads and writes; canonical input includes them. */
export function fromAnthropicUsage(u: AnthropicUsageWire): CanonicalUsage {
  const cacheWrite = u.cache_creation_input_tokens ?? 0;
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const usage: CanonicalUsage = {
    inputTokens: (u.input_tokens ?? 0) + cacheWrite + cacheRead,
    outputTokens: u.output_tokens ?? 0,
    cachedInputTokens: cacheRead,
    cacheWriteInputTokens: cacheWrite,
  };
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') {
    usage.reasoningTokens = thinking;
  }
  return usage;
}

/**
 * Usage of a streamed message: `message_start` carries the input counts, `message_delta`
 * the cumulative totals (its null or missing counters keep the earlier values).
 */
export class StreamUsage {
  private readonly totals: AnthropicUsageWire = {};

  /** Reads the event's usage; returns the running total when the event carried one. */
  read(event: string | undefined, data: string): CanonicalUsage | undefined {
    if (event !== 'message_start' && event !== 'message_delta') {
      return undefined;
    }
    let usage: AnthropicUsageWire | null | undefined;
    try {
      const parsed = JSON.parse(data) as {
        message?: { usage?: AnthropicUsageWire | null };
        usage?: AnthropicUsageWire | null;
      };
      usage = event === 'message_start' ? parsed.message?.usage : parsed.usage;
    } catch {
      return undefined;
    }
    if (!usage) {
      return undefined;
    }
    for (const [key, value] of Object.entries(usage)) {
      if (value !== null && value !== undefined) {
        setOwn(this.totals as Record<string, unknown>, key, value);
      }
    }
    return fromAnthropicUsage(this.totals);
  }
}

/** Anthropic puts `type` first in every event, so the first `"type"` is the event's own. */
const TYPE_FIELD = /"type"\s*:\s*"([A-Za-z_]+)"/;

/**
 * Relays the upstream's frames as they are, each with its `event:` line (taken from the
 * JSON `type` when a server left it out; the SDKs drop unnamed events), the catalog id
 * in `message_start`, and usage handed to `onUsage` as it becomes known. A stream that
 * ends without `message_stop` (and without an upstream `error` event, which already told
 * the client) fails with `upstream_stream_incomplete`: the writer sends `event: error`.
 */
export function relayMessagesFrames(
  frames: Observable<SseFrame>,
  modelId: string,
  onUsage: (usage: CanonicalUsage) => void,
): Observable<SseFrame> {
  const modelField = `"model":${JSON.stringify(modelId)}`;
  return defer(() => {
    const usage = new StreamUsage();
    let ended = false;
    const relayed = frames.pipe(
      map((frame): SseFrame => {
        const event = frame.event ?? TYPE_FIELD.exec(frame.data)?.[1];
        const current = usage.read(event, frame.data);
        if (current) {
          onUsage(current);
        }
        if (event === 'message_start') {
          return { event, data: rewriteModel(frame.data, modelField) };
        }
        if (event === 'message_stop' || event === 'error') {
          ended = true;
        }
        return event === frame.event ? frame : { event, data: frame.data };
      }),
    );
    return endWith(relayed, () => {
      if (!ended) {
        throw streamIncompleteError('message');
      }
      return [];
    });
  });
}
