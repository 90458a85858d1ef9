import type { ApiKeyInfo } from '../auth/api-key.service';
import { InvalidRequestError } from '../common/errors/gateway-errors';
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
   * the response closes. Throws BudgetExceededError when it does not fit. `protections`:
   * the worst case of the request's protection judge calls, added when they count against
   * budgets (asked only then).
   */
  reserve(
    key: ApiKeyInfo,
    worstCasePico: bigint,
    req: GatewayRequest,
    res: GatewayResponse,
    protections?: () => bigint,
  ): Promise<void>;
}

export const BUDGET_GATE = Symbol('BUDGET_GATE');

/**
 * A request whose answer is made after the response (Responses `background: true`) from a
 * key with a budget: its cost would come too late to settle the reservation, which would
 * close at nothing, so the budget could not hold.
 */
export class DetachedWithBudgetError extends InvalidRequestError {
  constructor() {
    super(
      "'background: true' is not available to an API key (or team) with a budget: the gateway does not see what a background response costs, so the budget could not hold. Send the request without 'background' (stream it for long answers), or use a key without a budget.",
      'background',
      'background_not_allowed_with_budget',
    );
  }
}
