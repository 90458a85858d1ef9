/**
 * Money as integers. Costs are pico-dollars (1e-12 USD) so that a catalog price of up to
 * six decimals per million tokens times a token count is exact; budgets are micro-dollars.
 * Decimal text is converted digit by digit, never through a float multiplication.
 */

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/** `text` (a decimal, e.g. `0.125` or `1e-7`) times 10^scale, rounded half up. */
export function scaleDecimal(text: string, scale: number): bigint {
  const m = DECIMAL.exec(text.trim());
  if (!m) {
    throw new Error(`not a decimal number: ${text}`);
  }
  const [, minus, whole, fraction = '', exponent = '0'] = m;
  const shift = scale + Number(exponent);
  let digits = whole + fraction;
  let point = whole.length + shift;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  digits = digits.padEnd(point + 1, '0');
  let value = BigInt(digits.slice(0, point) || '0');
  if (digits.charCodeAt(point) >= 53 /* '5' */) {
    value += 1n;
  }
  return minus ? -value : value;
}

/** A JSON number of dollars as integer units of 10^-scale dollars. */
export function usdToUnits(usd: number, scale: number): bigint {
  if (!Number.isFinite(usd)) {
    throw new Error(`not a finite amount: ${usd}`);
  }
  // String(n) is the shortest text that reads back as n: 0.1 stays "0.1".
  return scaleDecimal(String(usd), scale);
}

export const PICO_PER_MICRO = 1_000_000n;

/** Exact decimal text of `units` x 10^-scale dollars, trailing zeros removed. */
export function formatUnits(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

const SAFE_PICO = BigInt(Number.MAX_SAFE_INTEGER);

/** Dollars as a JSON number (for API answers), from pico-dollars. */
export function picoToUsd(pico: bigint): number {
  // Both operands exact and IEEE division correctly rounded: the same number as reading
  // the exact decimal text, without building it (costs are priced on every request).
  return pico <= SAFE_PICO && pico >= -SAFE_PICO
    ? Number(pico) / 1e12
    : Number(formatUnits(pico, 12));
}

/** Dollars as a JSON number, from micro-dollars. */
export function microsToUsd(micros: bigint): number {
  return Number(formatUnits(micros, 6));
}
