import type { CanonicalUsage } from '../core/canonical';
import type { LimitFacts } from './limit-facts';
import { estimatePromptTokens } from './tokens/token-estimator';

/**
 * A request's prompt tokens, counted at most once (by the first model family asked) and
 * only when something needs them: token rate limits, a budget, or the price of a stream the
 * client left before usage arrived. Once counted it lets the prompt's texts go, so a stream
 * that runs for minutes does not hold the client's whole prompt for a number it already has.
 */
export class PromptTokens {
  private facts: LimitFacts | undefined;
  private tokens: number | undefined;

  constructor(facts: LimitFacts) {
    this.facts = facts;
  }

  /** The prompt's tokens for `family` (the first family asked fixes the count). */
  count(family: string): number {
    if (this.tokens === undefined) {
      // Only the constructor sets facts, and only this line clears it, after counting.
      this.tokens = estimatePromptTokens(this.facts as LimitFacts, family);
      this.facts = undefined;
    }
    return this.tokens;
  }

  /** Takes a count made elsewhere (the context-window check's, by the model's family). */
  counted(tokens: number): void {
    this.tokens = tokens;
    this.facts = undefined;
  }
}

/**
 * The usage a request is priced at when its client left before the upstream reported any:
 * the prompt as counted and the output it asked for. Built here, away from the admission's
 * scope, so that the closure the request keeps holds only these three values.
 */
export function usageEstimate(
  prompt: PromptTokens,
  family: string,
  outputTokens: number,
): () => CanonicalUsage {
  return () => ({ inputTokens: prompt.count(family), outputTokens });
}
