import type { Request, Response } from 'express';
import type { ApiKeyInfo } from './key-policy';
import type { CanonicalUsage } from '../core/canonical';

/**
 * The per-request state: facts gathered along the way, read by the access log, the ledger,
 * metrics and the later checks. Lives on the request object: no request-scoped DI on the
 * hot path. Each field names the one place that writes it ("Written by"); everything else
 * only reads. What admission decides about a generation request (body, route, fallbacks,
 * protections, limits) is not here but in its frozen plan (`RequestPlan`,
 * src/formats/shared/request-plan.ts), which the generation guard makes once.
 */
export interface RequestContext {
  /** Written by: the request-context middleware, when the request arrives. */
  requestId: string;
  /** Written by: the request-context middleware. */
  startedAt: bigint;
  /** Short, non-reversible id of the client key (never the key). Written by: auth (authenticate.ts). */
  keyId?: string;
  /** The key's team when it was authenticated: what the ledger row records. Written by: auth. */
  team?: string;
  /**
   * The key as it was authenticated, read by every later check (scopes, limits, budget).
   * Held here rather than looked up again by id: a cache eviction in between would leave
   * those checks with nothing, and nothing to check must never mean "allowed".
   * Written by: auth (authenticate.ts).
   */
  key?: ApiKeyInfo;
  /**
   * Why authentication failed (a 401, or 503 when the key store was down), kept so that
   * the AuthGuard answers with it instead of asking the key store a second time.
   * Written by: auth (authenticate.ts), failed-auth throttle included.
   */
  authFailure?: { error: unknown };
  /**
   * The model that serves, for the log and the ledger. Written by: the generation guard
   * (routeGeneration, the requested model), then resilience per attempt (the serving one);
   * stored-response forwarding for those endpoints.
   */
  model?: string;
  /** The provider (deployment) that serves. Written by: as `model`. */
  provider?: string;
  /** Written by: the generation guard (routeGeneration); stored-response forwarding. */
  stream?: boolean;
  /**
   * The model the client named, kept when a started stream lets its body go (releaseBody),
   * for the ledger row. Written by: the generation pipeline.
   */
  modelAsked?: string;
  /**
   * Whether the response cache answered (`hit`) or was consulted and the upstream answered
   * (`miss`); absent when the cache does not apply. Written by: the generation pipeline.
   */
  cache?: 'hit' | 'miss';
  /** Upstream attempts made (retries and fallbacks included), for the access log. Written by: resilience. */
  attempts?: number;
  /**
   * The usage the upstream reported. Written by: the serving path once the answer ended (the
   * format's relay on the fast path, the pipeline on the canonical path), stored-response
   * forwarding.
   */
  usage?: CanonicalUsage;
  /** The `x-gateway-protections` verdicts, when a protection ran. Written by: protections (publish). */
  protections?: string;
  /**
   * Tokens and cost of protections' own model calls, never part of `usage`.
   * Written by: protections (protection-usage.ts), appended once per call.
   */
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
   * Written by: limits (admission).
   */
  estimateUsage?: () => CanonicalUsage;
  /**
   * The request's budget reservation, settled once with the ledger row's costs when the
   * response closes (absent: the key and its team have no budget).
   * Written by: the budget gate (usage/budget.gate.ts) at admission; settled by UsageRecorder.ended.
   */
  budgetHold?: { settle(cost: { costPico: bigint; protectionCostPico: bigint }): void };
  /**
   * Called before an error envelope is written (protections settle their verdicts).
   * Written by: protections (ProtectionsGate.plan).
   */
  beforeErrorResponse?: () => void;
  /**
   * Set when an error response was produced, for the log line. Written by: the error
   * filters, the SSE writer (an in-stream error) and bootstrap's early refusals.
   */
  errorCode?: string | null;
}

export type GatewayRequest = Request & { ctx: RequestContext; rawBody?: Buffer };
export type GatewayResponse = Response;
