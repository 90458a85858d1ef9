import type { ApiKeyInfo } from '../common/key-policy';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';

/**
 * Spending caps, as the limits see them: whether a key may start another request. The
 * implementation (the usage module) knows where spend is counted; the limits do not.
 */
export interface BudgetGate {
  /**
   * Whether the key or its team has a budget. Synchronous and free: a key without one pays
   * nothing more on the request path.
   */
  applies(key: ApiKeyInfo): boolean;
  /**
   * Reserves `worstCasePico` against the key's budget and its team's, shared by every
   * replica, and leaves on the request what settles the reservation to the real cost when
   * the response closes. Throws BudgetExceededError when it does not fit.
   */
  reserve(
    key: ApiKeyInfo,
    worstCasePico: bigint,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void>;
}

export const BUDGET_GATE = Symbol('BUDGET_GATE');
