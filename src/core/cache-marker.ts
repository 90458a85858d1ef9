import type { CacheMarker } from './canonical';

/**
 * A block's Anthropic-style `cache_control` breakpoint, when it has one: the Messages
 * decoder reads it on every block, the chat decoder on the text parts of clients that reach
 * Claude through chat completions and mark them the same way.
 */
export function cacheMarker(block: unknown): CacheMarker | undefined {
  const control = (block as { cache_control?: unknown } | null | undefined)?.cache_control;
  if (typeof control !== 'object' || control === null) {
    return undefined;
  }
  const ttl = (control as { ttl?: unknown }).ttl;
  return typeof ttl === 'string' ? { type: 'ephemeral', ttl } : { type: 'ephemeral' };
}
