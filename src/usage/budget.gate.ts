import { type KeyBudget, budgetWindow } from '../auth/key-policy';
import { BudgetExceededError } from '../common/errors/gateway-errors';
import type { BudgetGate } from '../limits/budget-gate';
import { PICO_PER_MICRO, formatUnits } from './money';
import type { SpendTracker } from './spend.tracker';

const PERIOD_TEXT = { day: 'per day', month: 'per month', total: 'in total' } as const;

function refusal(budget: KeyBudget, spentPico: bigint, now: number): BudgetExceededError {
  const amount = formatUnits(budget.amountMicros, 6);
  const spent = formatUnits(spentPico, 12);
  const { resetsAt } = budgetWindow(budget.period, now);
  const when =
    resetsAt === undefined
      ? 'It does not reset: raise the budget or use another key.'
      : `It resets at ${new Date(resetsAt).toISOString().replace('.000Z', 'Z')}.`;
  return new BudgetExceededError(
    `This API key has spent its budget of $${amount} ${PERIOD_TEXT[budget.period]} ($${spent} used). ${when}`,
  );
}

/**
 * Refuses a request once the key's spend in the period has reached its budget. The
 * check is against spend already known, so requests admitted together may overshoot by
 * what they themselves cost (see the README's budget section for the bound).
 */
export class SpendBudgetGate implements BudgetGate {
  constructor(private readonly spend: SpendTracker) {}

  check(keyId: string, budget: KeyBudget, now: number): void | Promise<void> {
    const limit = budget.amountMicros * PICO_PER_MICRO;
    const spent = this.spend.spent(keyId, budget.period);
    if (spent instanceof Promise) {
      return spent.then((s) => {
        if (s >= limit) {
          throw refusal(budget, s, now);
        }
      });
    }
    if (spent >= limit) {
      throw refusal(budget, spent, now);
    }
  }
}
