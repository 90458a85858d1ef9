import type { ApiKeyInfo } from '../../common/key-policy';
import type { GenerationRoute } from './canonical-path';
import type { GenerationBody } from './generation.adapter';

/** The conversation state of a format's requests, provided by its module (optional). */
export const CONVERSATION_STATE = Symbol('CONVERSATION_STATE');

/**
 * Server-held conversation state a request may name (Responses' `previous_response_id`,
 * `item_reference`), resolved at admission so that the frozen plan holds the whole
 * conversation: the limits, the budget and the protections count it, and every attempt
 * sends it.
 */
export interface ConversationState<B extends GenerationBody = GenerationBody> {
  /** Whether `body` names any state (no I/O: most requests name none and pay nothing). */
  names(body: B): boolean;
  /**
   * Checks that the key may reach what `body` names (the format's not-found errors
   * otherwise) and returns the body to serve: the history filled in (a frozen copy), or
   * `body` itself when what it names is held elsewhere (the upstream's own store).
   */
  resolve(body: B, key: ApiKeyInfo | undefined, route: GenerationRoute): Promise<B>;
}
