import { formatUnits, picoToUsd } from '../common/money';
import type { CanonicalUsage } from '../core/canonical';
import { testModel } from '../testing/test-model';
import type { ModelPricing } from './catalog.types';
import { costPico, costPicoOf, costUsd, pricesOf, tokenPrices } from './cost';

describe('costPico', () => {
  const gpt5 = tokenPrices({ input: 1.25, output: 10, cachedInput: 0.125, cacheWrite: 0 });

  it('prices fresh input, cached input and output separately', () => {
    // 1000 fresh x 1.25 + 200 cached x 0.125 + 300 out x 10, per million.
    const pico = costPico(
      { inputTokens: 1200, cachedInputTokens: 200, outputTokens: 300, reasoningTokens: 100 },
      gpt5,
    );
    expect(formatUnits(pico, 12)).toBe('0.004275');
  });

  it('prices cache writes at their own price, or input when unpriced', () => {
    const claude = tokenPrices({ input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 });
    const usage = { inputTokens: 1000, cacheWriteInputTokens: 1000, outputTokens: 0 };
    expect(formatUnits(costPico(usage, claude), 12)).toBe('0.00375');
    const plain = tokenPrices({ input: 3, output: 15 });
    expect(formatUnits(costPico(usage, plain), 12)).toBe('0.003');
  });

  it('keeps sub-micro-dollar amounts exact when summed', () => {
    const cheap = tokenPrices({ input: 0.075, output: 0.3 });
    let total = 0n;
    for (let i = 0; i < 1000; i++) {
      total += costPico({ inputTokens: 7, outputTokens: 3 }, cheap);
    }
    // (7 x 0.075 + 3 x 0.3) per million x 1000 requests.
    expect(formatUnits(total, 12)).toBe('0.001425');
  });
});

describe('costUsd and costPicoOf (the ledger, metrics and judges price alike)', () => {
  const usage: CanonicalUsage = {
    inputTokens: 1_000_000,
    outputTokens: 1_000_000,
    cachedInputTokens: 400_000,
    cacheWriteInputTokens: 100_000,
  };
  const model = (pricing: ModelPricing) => testModel('chat', { pricing });

  it('prices fresh, cached, cache-written and output tokens at their rates', () => {
    const m = model({ input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 });
    // 0.5 M fresh x 3 + 0.4 M cached x 0.3 + 0.1 M written x 3.75 + 1 M out x 15.
    expect(formatUnits(costPicoOf(usage, m), 12)).toBe('16.995');
    expect(costUsd(usage, m)).toBe(16.995);
  });

  it('prices cached and cache-written tokens as input when the model has no such rate', () => {
    expect(costUsd(usage, model({ input: 2, output: 4 }))).toBe(6);
  });

  it('costs nothing for a free model', () => {
    expect(costUsd(usage, model({ input: 0, output: 0 }))).toBe(0);
  });

  it('prices reasoning beyond the reported output as output', () => {
    const m = model({ input: 0, output: 10 });
    expect(costUsd({ inputTokens: 0, outputTokens: 100, reasoningTokens: 300 }, m)).toBe(0.003);
  });

  it('gives the dollar figure of the exact integer, without float sums', () => {
    // 0.1 + 0.2 per million in floats is 0.30000000000000004e-6.
    const m = model({ input: 0.1, output: 0.2 });
    const u = { inputTokens: 1, outputTokens: 1 };
    expect(costPicoOf(u, m)).toBe(300_000n);
    expect(costUsd(u, m)).toBe(picoToUsd(300_000n));
    expect(costUsd(u, m)).toBe(3e-7);
  });

  it("converts a model's prices once", () => {
    const m = model({ input: 1, output: 2 });
    expect(pricesOf(m)).toBe(pricesOf(m));
    expect(pricesOf(m)).toEqual(tokenPrices(m.pricing));
  });
});
