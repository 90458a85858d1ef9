import type { CanonicalUsage } from '../core/canonical';
import { picoToUsd, usdToUnits } from '../common/money';
import type { CatalogModel, ModelPricing } from './catalog.types';

/**
 * The one cost function: what a model's usage costs at its catalog prices, in exact
 * integers (pico-dollars). The ledger and budgets keep the integer; metrics, traces and
 * the protections' usage header take {@link costUsd}, the same figure as a number.
 */

/** Catalog prices (USD per million tokens) as integer pico-dollars per token. */
export interface TokenPrices {
  input: bigint;
  output: bigint;
  cachedInput: bigint;
  cacheWrite: bigint;
}

/** USD per 1M tokens = 1e-6 USD per token = 1e6 pico-dollars per token. */
const PICO_SCALE_PER_TOKEN = 6;

export function tokenPrices(pricing: ModelPricing): TokenPrices {
  const input = usdToUnits(pricing.input, PICO_SCALE_PER_TOKEN);
  return {
    input,
    output: usdToUnits(pricing.output, PICO_SCALE_PER_TOKEN),
    // Unpriced cache reads and writes cost what fresh input costs.
    cachedInput:
      pricing.cachedInput === undefined
        ? input
        : usdToUnits(pricing.cachedInput, PICO_SCALE_PER_TOKEN),
    cacheWrite:
      pricing.cacheWrite === undefined
        ? input
        : usdToUnits(pricing.cacheWrite, PICO_SCALE_PER_TOKEN),
  };
}

/**
 * Exact cost of `usage` in pico-dollars. Canonical input counts cached and cache-written
 * tokens too (OpenAI semantics), so they are taken out of the fresh input; reasoning
 * tokens are part of the output count in every wire format and priced as output.
 */
export function costPico(usage: CanonicalUsage, prices: TokenPrices): bigint {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const fresh = Math.max(usage.inputTokens - cached - written, 0);
  const output = Math.max(usage.outputTokens, usage.reasoningTokens ?? 0);
  return (
    BigInt(fresh) * prices.input +
    BigInt(cached) * prices.cachedInput +
    BigInt(written) * prices.cacheWrite +
    BigInt(output) * prices.output
  );
}

const pricesByModel = new WeakMap<CatalogModel, TokenPrices>();

/** A catalog model's prices as integers, converted once per model (a reload makes new models). */
export function pricesOf(model: CatalogModel): TokenPrices {
  let prices = pricesByModel.get(model);
  if (prices === undefined) {
    prices = tokenPrices(model.pricing);
    pricesByModel.set(model, prices);
  }
  return prices;
}

/** Exact cost of `usage` on `model`, in pico-dollars. */
export function costPicoOf(usage: CanonicalUsage, model: CatalogModel): bigint {
  return costPico(usage, pricesOf(model));
}

/** The same cost in dollars, as a number (for metrics, spans and headers). */
export function costUsd(usage: CanonicalUsage, model: CatalogModel): number {
  return picoToUsd(costPico(usage, pricesOf(model)));
}
