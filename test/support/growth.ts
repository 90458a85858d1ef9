/**
 * How the cost of `run(size)` grows when its input grows fourfold: this process's CPU time
 * at 4 × `size` over its CPU time at `size`, each the least of `samples` runs after one
 * warm-up. Linear work gives about 4, quadratic about 16, a backtracking regex far more.
 *
 * Specs compare this ratio with {@link LINEAR_GROWTH}, never a time with a budget: a slower
 * or busier machine scales both runs alike. CPU time leaves out the time other processes
 * (jest workers, a database) take the core away, and the least of a few runs leaves out a
 * collection that happens to land in one of them. Speed itself is measured by the bench.
 */
export function growth(run: (size: number) => void, size: number, samples = 3): number {
  run(size);
  let small = Infinity;
  let large = Infinity;
  for (let i = 0; i < samples; i++) {
    const atSize = cpuMicros(() => run(size));
    const atFourTimes = cpuMicros(() => run(size * 4));
    small = Math.min(small, atSize);
    large = Math.min(large, atFourTimes);
  }
  return large / Math.max(small, 1);
}

/**
 * The bound specs hold {@link growth} to. Linear work measures 2 to 6 (below 4 where a fixed
 * cost dominates, above where a larger input leaves the CPU caches), also with every core
 * busy; quadratic work measures 16, and the blow-ups these specs guard against are so
 * steep that their quadratic part dominates at the sizes used.
 */
export const LINEAR_GROWTH = 10;

function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return spent.user + spent.system;
}
