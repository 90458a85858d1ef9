import { costPico, tokenPrices } from './cost';
import { formatUnits, picoToUsd, scaleDecimal, usdToUnits } from './money';

describe('money', () => {
  it('scales decimal text exactly, rounding half up', () => {
    expect(scaleDecimal('0.125', 6)).toBe(125_000n);
    expect(scaleDecimal('1.25', 6)).toBe(1_250_000n);
    expect(scaleDecimal('1e-7', 6)).toBe(0n);
    expect(scaleDecimal('5e-7', 6)).toBe(1n);
    expect(scaleDecimal('0.0375', 6)).toBe(37_500n);
    expect(scaleDecimal('12', 0)).toBe(12n);
    expect(scaleDecimal('-2.5', 1)).toBe(-25n);
    expect(() => scaleDecimal('abc', 2)).toThrow();
  });

  it('converts JSON numbers without float error (0.1 + 0.2 stays exact)', () => {
    expect(usdToUnits(0.1, 6) + usdToUnits(0.2, 6)).toBe(usdToUnits(0.3, 6));
    expect(usdToUnits(0.07, 12)).toBe(70_000_000_000n);
  });

  it('formats units back to exact decimal text', () => {
    expect(formatUnits(1_250_000n, 6)).toBe('1.25');
    expect(formatUnits(3n, 12)).toBe('0.000000000003');
    expect(formatUnits(0n, 6)).toBe('0');
    expect(formatUnits(-15n, 1)).toBe('-1.5');
    expect(picoToUsd(139_000_000n)).toBe(0.000139);
  });
});

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
