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

  it('reads pico-dollars as the same number as their exact decimal text', () => {
    const samples = [0n, 1n, 7n, 139_000_000n, 4_275_000_000n, 123_456_789_012_345n];
    for (let i = 0; i < 2000; i++) {
      samples.push(BigInt(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER)));
    }
    samples.push(BigInt(Number.MAX_SAFE_INTEGER), 10n ** 20n + 3n, -5_000_000n);
    for (const pico of samples) {
      expect(picoToUsd(pico)).toBe(Number(formatUnits(pico, 12)));
    }
  });
});
