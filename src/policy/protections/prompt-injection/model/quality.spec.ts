import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { detectInjection } from '../detector';
import { parseJsonl, rateAtOrAbove, splitBucket, thresholdAtFpr } from '../evaluation';

/**
 * The committed weights against the held-out 30% of the shared dev set (rows the model never
 * trained on). Skipped where ../shared is absent (CI): the data is never copied into the repo.
 */
const DEV = resolve(
  __dirname,
  '..',
  '..',
  '..',
  '..',
  '..',
  '..',
  'shared',
  'data',
  'prompt-injection',
  'dev.jsonl',
);
const withData = existsSync(DEV) ? describe : describe.skip;

withData('committed prompt-injection model on held-out dev rows', () => {
  const rows = existsSync(DEV)
    ? parseJsonl(readFileSync(DEV, 'utf8')).filter((r) => splitBucket(r.id ?? r.text) >= 0.7)
    : [];
  const scores = rows.map((r) => detectInjection(r.text).score);
  const pos = scores.filter((_, i) => rows[i].label === 1);
  const neg = scores.filter((_, i) => rows[i].label === 0);

  // A floor on known sources, not the goal: the multilingual templates (issue 30) cost the
  // held-out dev rows one point (85.9% -> 84.9%) for +20 points on unseen sources.
  it('catches most injections at 1% false positives', () => {
    expect(rateAtOrAbove(pos, thresholdAtFpr(neg, 0.01))).toBeGreaterThanOrEqual(0.84);
  });

  it('keeps hard negatives under 2% false positives at the default threshold', () => {
    const hard = scores.filter((_, i) => rows[i].hard_negative === true);
    expect(hard.length).toBeGreaterThan(50);
    expect(rateAtOrAbove(hard, 0.5)).toBeLessThanOrEqual(0.02);
    expect(rateAtOrAbove(neg, 0.5)).toBeLessThanOrEqual(0.02);
  });
});
