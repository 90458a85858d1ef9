/** Summary statistics shared by the benchmarks. */
export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function round(value: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Count, mean and percentiles of `samples`, rounded to `digits` decimals. */
export function summarize(samples: number[], digits = 4): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length);
  const r = (v: number): number => round(v, digits);
  return {
    count: sorted.length,
    min: r(sorted[0] ?? NaN),
    mean: r(mean),
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
    p999: r(percentile(sorted, 99.9)),
    max: r(sorted[sorted.length - 1] ?? NaN),
  };
}
