import type { KeyBudget } from '../auth/key-policy';

/**
 * Spending caps, as the limits see them: whether a key may start another request. The
 * implementation (the usage module) knows where spend is counted; the limits do not.
 */
export interface BudgetGate {
  /**
   * Returns (or resolves) when the key may spend; throws BudgetExceededError when its
   * budget for the current period is spent. Synchronous once the key's spend is known.
   */
  check(keyId: string, budget: KeyBudget, now: number): void | Promise<void>;
}

export const BUDGET_GATE = Symbol('BUDGET_GATE');
