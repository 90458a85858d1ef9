/**
 * The bound specs hold {@link growth} to. Linear work measures 2 to 6 (below 4 where a fixed
 * cost dominates, above where a larger input leaves the CPU caches), also with every core
 * busy; quadratic work measures 16, and the blow-ups these specs guard against are so
 * steep that their quadratic part dominates at the sizes used.
 */
export const LINEAR_GROWTH = 10;

/**
 * Pairs measured, and measured at most while none is below the bound: a busy moment costs
 * a few more runs instead of a red build, and quadratic work stays above it in every pair.
 */
const PAIRS = 3;
const MAX_PAIRS = 9;

/**
 * How the cost of `run(size)` grows when its input grows fourfold: this process's CPU time
 * at 4 × `size` over its CPU time at `size`, measured in back-to-back pairs after one
 * warm-up, the least of the pairs' ratios. Linear work gives about 4, quadratic about
 * 16, a backtracking regex far more.
 *
 * Specs compare this ratio with {@link LINEAR_GROWTH}, never a time with a budget: a slower
 * machine scales both runs alike. Load is what moves it, and each choice here leaves out
 * one kind: CPU time leaves out the time other processes hold the core; pairing the runs
 * leaves out load that lasts across a pair (a shared core running slower slows both runs
 * alike); the least of the pairs leaves out a burst (a collection) that hits one run only.
 * Taking the least of each size separately instead let a linear count measure 10.4 on CI.
 */
export function growth(run: (size: number) => void, size: number): number {
  run(size);
  let least = Infinity;
  for (let i = 0; i < MAX_PAIRS && (i < PAIRS || least >= LINEAR_GROWTH); i++) {
    const atSize = cpuMicros(() => run(size));
    const atFourTimes = cpuMicros(() => run(size * 4));
    least = Math.min(least, atFourTimes / Math.max(atSize, 1));
  }
  return least;
}

function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return spent.user + spent.system;
}
