import type { CatalogModel } from '../catalog/catalog.types';
import { pricesOf } from '../catalog/cost';
import { familyProfile } from './tokens/token-estimator';

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Anthropic's smallest thinking budget. A reasoning request translated to Messages with an
 * output cap this small gets its `max_tokens` raised by it (to-anthropic.ts), so such a
 * model may answer with this many tokens more than the client asked.
 */
const THINKING_FLOOR = 1024;

/**
 * Prompt tokens a budget reserves for: the estimate the limits count, raised by the family
 * estimator's stated tolerance, so that a real count within that tolerance stays covered.
 */
export function reservedPromptTokens(estimate: number, family: string): number {
  // In thousandths, so that 100 tokens at 10% are 110, not 110.00000000000001 rounded up.
  const permille = Math.round(familyProfile(family).tolerance * 1000);
  return estimate + Math.ceil((estimate * permille) / 1000);
}

/**
 * The most one answer of `model` can cost, in pico-dollars: every prompt token at the
 * dearest input price the model has (a cache write costs more than fresh input on
 * Anthropic), plus the output cap (the request's, else the model's maximum output; reasoning
 * is part of it in every wire format) at the output price.
 */
export function worstCaseOfModel(
  model: CatalogModel,
  promptTokens: number,
  requestedOutput: number | undefined,
): bigint {
  const p = pricesOf(model);
  const input = max(p.input, max(p.cachedInput, p.cacheWrite));
  let output = requestedOutput ?? model.maxOutputTokens;
  if (
    model.upstreamApi === 'messages' &&
    model.capabilities.reasoning &&
    output <= THINKING_FLOOR
  ) {
    output += THINKING_FLOOR;
  }
  return BigInt(promptTokens) * input + BigInt(output) * p.output;
}

/**
 * The worst case over every model the request may reach (the requested one, its fallbacks,
 * the client's own fallback list): retries and fallbacks bill only the attempt that answers,
 * so the dearest of them bounds the request. `promptTokens(m)` counts the prompt for a
 * model; 0 when no model is known (no price, nothing to reserve).
 */
export function worstCaseCost(
  models: readonly CatalogModel[],
  requestedOutput: number | undefined,
  promptTokens: (m: CatalogModel) => number,
): bigint {
  let worst = 0n;
  for (const m of models) {
    worst = max(worst, worstCaseOfModel(m, promptTokens(m), requestedOutput));
  }
  return worst;
}

/**
 * `model` and every catalog model a fallback may route its request to, that `allowed`
 * accepts: a superset of what the fallback plan picks (it also filters by endpoint and
 * stops at five), which only makes the maximum safer.
 */
export function reachableModels(
  model: CatalogModel,
  find: (id: string) => CatalogModel | undefined,
  allowed: (m: CatalogModel) => boolean,
  asked: readonly unknown[],
): CatalogModel[] {
  const out = [model];
  for (const id of [...(model.fallbacks ?? []), ...asked]) {
    const m = typeof id === 'string' ? find(id.trim()) : undefined;
    if (m !== undefined && !out.includes(m) && allowed(m)) {
      out.push(m);
    }
  }
  return out;
}
