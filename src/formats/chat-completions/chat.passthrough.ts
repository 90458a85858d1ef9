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
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export function fromChatUsage(u: ChatUsageWire): CanonicalUsage {
  return {
    inputTokens: u.prompt_tokens ?? 0,
    outputTokens: u.completion_tokens ?? 0,
    cachedInputTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
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
