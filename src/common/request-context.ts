import type { Request, Response } from 'express';
import type { ApiKeyInfo } from '../auth/api-key.service';
import type { CanonicalUsage } from '../core/canonical';

/**
 * Per-request facts gathered along the way and written once in the access log.
 * Lives on the request object: no request-scoped DI on the hot path.
 */
export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  /** Short, non-reversible id of the client key (never the key). */
  keyId?: string;
  /** The key's team when it was authenticated: what the ledger row records. */
  team?: string;
  /**
   * The key as it was authenticated, read by every later check (scopes, limits, budget).
   * Held here rather than looked up again by id: a cache eviction in between would leave
   * those checks with nothing, and nothing to check must never mean "allowed".
   */
  key?: ApiKeyInfo;
  /**
   * Why authentication failed (a 401, or 503 when the key store was down), kept so that
   * the AuthGuard answers with it instead of asking the key store a second time.
   */
  authFailure?: { error: unknown };
  model?: string;
  provider?: string;
  stream?: boolean;
  /** Upstream attempts made (retries and fallbacks included), for the access log. */
  attempts?: number;
  usage?: CanonicalUsage;
  /** The `x-gateway-protections` verdicts, when a protection ran. */
  protections?: string;
  /** Tokens and cost of protections' own model calls, never part of `usage`. */
  protectionUsage?: {
    protection: string;
    model: string;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
  }[];
  /**
   * The gateway's estimate of the request's usage (prompt estimate + reserved output),
   * priced when the client left before the upstream reported usage. Lazy: rarely needed.
   */
  estimateUsage?: () => CanonicalUsage;
  /**
   * The request's budget reservation, settled once with the ledger row's costs when the
   * response closes (absent: the key and its team have no budget).
   */
  budgetHold?: { settle(cost: { costPico: bigint; protectionCostPico: bigint }): void };
  /** Called before an error envelope is written (protections settle their verdicts). */
  beforeErrorResponse?: () => void;
  /** Set when an error response was produced, for the log line. */
  errorCode?: string | null;
}

export type GatewayRequest = Request & { ctx: RequestContext; rawBody?: Buffer };
export type GatewayResponse = Response;
