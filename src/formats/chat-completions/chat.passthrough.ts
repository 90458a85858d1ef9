import { Observable, defer } from 'rxjs';
import type { SseFrame } from '../../common/sse/sse-writer';
import { endWith, streamIncompleteError } from '../../common/sse/stream-end';
import type { CanonicalUsage } from '../../core/canonical';

/**
 * Helpers for the chat fast path: the upstream's chunks are relayed as text, with only
 * the cheap string work that the model rewrite and usage accounting need.
 */

const MODEL_FIELD = /"model"\s*:\s*"(?:[^"\\]|\\.)*"/;
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

/**
 * Replaces the first `"model":"..."` of a serialized chunk. Inside JSON strings quotes
 * are escaped, so an unescaped `"model":"` can only be a key; OpenAI-style servers put
 * the top-level `model` before `choices`.
 */
export function rewriteModel(json: string, modelField: string): string {
  return json.replace(MODEL_FIELD, modelField);
}

interface ChatUsageWire {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export function fromChatUsage(u: ChatUsageWire): CanonicalUsage {
  return {
    inputTokens: u.prompt_tokens ?? 0,
    outputTokens: u.completion_tokens ?? 0,
    cachedInputTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
    ...(typeof u.prompt_tokens_details?.cache_write_tokens === 'number'
      ? { cacheWriteInputTokens: u.prompt_tokens_details.cache_write_tokens }
      : {}),
  };
}

/** The usage of a streamed chunk, parsed only when the chunk carries one. */
export function usageOfChunk(json: string): CanonicalUsage | undefined {
  if (!USAGE_OBJECT.test(json)) {
    return undefined;
  }
  try {
    const chunk = JSON.parse(json) as { usage?: ChatUsageWire | null };
    return chunk.usage ? fromChatUsage(chunk.usage) : undefined;
  } catch {
    return undefined;
  }
}

const INCLUDE_USAGE = Buffer.from('"stream_options":{"include_usage":true},');

/**
 * The client's raw body with `"stream_options":{"include_usage":true}` as its first key,
 * spliced after the opening brace: no re-serialization of the whole body. Only for a
 * body that has no `stream_options` key at all (so no duplicate key can arise) and at
 * least one key (a streamed request has `stream`); undefined when the bytes do not start
 * with an object.
 */
export function spliceIncludeUsage(raw: Buffer): Buffer | undefined {
  let i = 0;
  // JSON whitespace only: space, tab, line feed, carriage return.
  while (
    i < raw.length &&
    (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d)
  ) {
    i++;
  }
  if (raw[i] !== 0x7b) {
    return undefined;
  }
  // Bytes of its own, not a slice of Node's shared pool: the upstream call keeps them (see
  // requestBody), and a slice would keep the pool's whole 8 KB slab for as long.
  const out = Buffer.allocUnsafeSlow(raw.length + INCLUDE_USAGE.length);
  raw.copy(out, 0, 0, i + 1);
  INCLUDE_USAGE.copy(out, i + 1);
  raw.copy(out, i + 1 + INCLUDE_USAGE.length, i + 1);
  return out;
}

/** A chunk that finishes a choice: `"finish_reason":"..."`, i.e. a non-null value. */
const FINISHED = /"finish_reason"\s*:\s*"/;
/** The upstream's own in-stream error frame. */
const ERROR_FRAME = /^\s*\{\s*"error"\s*:/;
const EMPTY_CHOICES = /"choices"\s*:\s*\[\s*\]/;
const DONE: SseFrame = { data: '[DONE]' };

export interface ChatRelayOptions {
  /** Catalog id to report in every chunk. */
  modelId: string;
  /**
   * The upstream is asked for the catalog id itself: a chunk that already carries it
   * (an includes test) skips the rewrite. OpenAI answers with dated snapshot ids, so
   * the test is still needed.
   */
  sameModelId: boolean;
  /** The gateway added `include_usage`: the usage-only chunk is not relayed. */
  stripUsageChunk: boolean;
  onUsage(usage: CanonicalUsage): void;
}

/**
 * Relays an upstream chat stream: chunks as text with the catalog model id, usage
 * handed to `onUsage`, and an ending that cannot look complete when it is not. A stream
 * that ends without `[DONE]` gets one when some chunk had a `finish_reason` (or the
 * upstream sent its own error frame); one with neither fails with
 * `upstream_stream_incomplete`, which the writer sends as an in-stream error frame.
 */
export function relayChatFrames(
  frames: Observable<SseFrame>,
  opts: ChatRelayOptions,
): Observable<SseFrame> {
  const modelField = `"model":${JSON.stringify(opts.modelId)}`;
  return defer(() => {
    let sawDone = false;
    let finished = false;
    const relayed = new Observable<SseFrame>((subscriber) =>
      frames.subscribe({
        next(frame) {
          const data = frame.data;
          if (data === '[DONE]') {
            sawDone = true;
            subscriber.next(frame);
            return;
          }
          if (!finished && (FINISHED.test(data) || ERROR_FRAME.test(data))) {
            finished = true;
          }
          const usage = usageOfChunk(data);
          if (usage) {
            opts.onUsage(usage);
            if (opts.stripUsageChunk && EMPTY_CHOICES.test(data)) {
              return;
            }
          }
          subscriber.next({
            data:
              opts.sameModelId && data.includes(modelField) ? data : rewriteModel(data, modelField),
          });
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
    return endWith(relayed, () => {
      if (sawDone) {
        return [];
      }
      if (!finished) {
        throw streamIncompleteError('completion');
      }
      return [DONE];
    });
  });
}
