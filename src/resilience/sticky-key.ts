import type { GatewayRequest } from '../common/request-context';

export const SESSION_HEADER = 'x-gateway-session';

/**
 * The key that keeps one conversation on one deployment. Anthropic thinking signatures and
 * OpenAI encrypted reasoning items only verify on the deployment (organisation, resource)
 * that made them, and prompt caches are per deployment too; the gateway keeps no
 * per-conversation state, so it hashes a key every turn of a conversation repeats:
 * `x-gateway-session`, else OpenAI's `prompt_cache_key`, else `user`, else Anthropic's
 * `metadata.user_id`. Without one, the load balancer chooses freely.
 */
export function stickyKeyOf(req: GatewayRequest, body: object): string | undefined {
  const header = req.headers[SESSION_HEADER];
  if (typeof header === 'string' && header !== '') {
    return header;
  }
  const b = body as { prompt_cache_key?: unknown; user?: unknown; metadata?: unknown };
  if (typeof b.prompt_cache_key === 'string') {
    return b.prompt_cache_key;
  }
  if (typeof b.user === 'string') {
    return b.user;
  }
  const userId = (b.metadata as { user_id?: unknown } | null | undefined)?.user_id;
  return typeof userId === 'string' ? userId : undefined;
}
