/**
 * Metrics of the prompt-injection classifier for the training and evaluation scripts: the
 * held-out split at the shipped operating point, and leave-one-source-out summaries.
 */
import type { InjectionModel } from '../src/policy/protections/prompt-injection/model/model-file';
import { rocAuc } from '../src/policy/protections/prompt-injection/evaluation';
import { thresholdFor, type Example, type FoldResult } from './injection-training';

const round = (x: number): number => (Number.isFinite(x) ? Number(x.toFixed(4)) : x);

function rate(values: readonly number[], threshold: number): number {
  return values.length === 0 ? NaN : values.filter((v) => v >= threshold).length / values.length;
}

export interface SliceRate {
  slice: string;
  rows: number;
  /** TPR for injection slices, FPR for benign ones. */
  rate: number;
}

export interface HoldoutReport {
  rows: number;
  positives: number;
  negatives: number;
  auc: number;
  /** TPR at the threshold that gives 1% FPR on this subset's own benign rows. */
  tprAt1pctFpr: number;
  /** At the shipped default (score 0.5). */
  tprAtDefault: number;
  fprAtDefault: number;
  hardNegatives: number;
  hardNegativeFprAtDefault: number;
  slices: SliceRate[];
}

function slices(
  examples: readonly Example[],
  logits: readonly number[],
  threshold: (i: number) => number,
): SliceRate[] {
  const by = new Map<string, { rows: number; hits: number }>();
  examples.forEach((e, i) => {
    const key = `${e.row.slice ?? '(none)'}`;
    const s = by.get(key) ?? { rows: 0, hits: 0 };
    s.rows += 1;
    s.hits += logits[i] >= threshold(i) ? 1 : 0;
    by.set(key, s);
  });
  return [...by.entries()]
    .map(([slice, s]) => ({ slice, rows: s.rows, rate: round(s.hits / s.rows) }))
    .sort((a, b) => a.slice.localeCompare(b.slice));
}

/** Held-out metrics of the shipped model (logits from it, its calibration threshold). */
export function holdoutReport(
  examples: readonly Example[],
  logits: readonly number[],
  model: InjectionModel,
): HoldoutReport {
  const t = model.calibration.threshold;
  const pos = logits.filter((_, i) => examples[i].row.label === 1);
  const neg = logits.filter((_, i) => examples[i].row.label === 0);
  const hard = logits.filter((_, i) => examples[i].row.hard_negative === true);
  return {
    rows: examples.length,
    positives: pos.length,
    negatives: neg.length,
    auc: round(
      rocAuc(
        logits,
        examples.map((e) => e.row.label),
      ),
    ),
    tprAt1pctFpr: round(rate(pos, thresholdFor(neg, 0.01))),
    tprAtDefault: round(rate(pos, t)),
    fprAtDefault: round(rate(neg, t)),
    hardNegatives: hard.length,
    hardNegativeFprAtDefault: round(rate(hard, t)),
    slices: slices(examples, logits, () => t),
  };
}

/** Out-of-source rates of one group of rows (a slice or a language). */
export interface GroupRate {
  key: string;
  positives: number;
  negatives: number;
  /** At the pooled threshold (NaN without rows of that label). */
  tpr: number;
  fpr: number;
}

/**
 * The headline: every row scored by the fold model that never saw its family, shifted by
 * its fold's threshold so the folds share one scale, then one threshold at 1% FPR on all
 * these out-of-source benign rows. TPR at it is the leave-one-source-out TPR at 1% FPR with
 * the negatives, too, from sources the model never trained on.
 */
export interface PooledLoso {
  rows: number;
  positives: number;
  negatives: number;
  auc: number;
  tprAt1pctFpr: number;
  /** Hard negatives' FPR at the pooled threshold. */
  hardNegativeFpr: number;
  /** Pooled threshold, as a shift of the fold thresholds (logits). */
  shift: number;
  bySlice: GroupRate[];
  byLanguage: GroupRate[];
  byFamily: GroupRate[];
}

function groupRates(
  examples: readonly Example[],
  z: readonly number[],
  t: number,
  keyOf: (e: Example) => string,
): GroupRate[] {
  const by = new Map<string, { pos: number[]; neg: number[] }>();
  examples.forEach((e, i) => {
    const key = keyOf(e);
    const g = by.get(key) ?? { pos: [], neg: [] };
    (e.row.label === 1 ? g.pos : g.neg).push(z[i]);
    by.set(key, g);
  });
  return [...by.entries()]
    .map(([key, g]) => ({
      key,
      positives: g.pos.length,
      negatives: g.neg.length,
      tpr: round(rate(g.pos, t)),
      fpr: round(rate(g.neg, t)),
    }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

export function pooledLoso(folds: readonly FoldResult[]): PooledLoso {
  const examples = folds.flatMap((f) => f.examples);
  const z = folds.flatMap((f) => f.logits.map((l) => l - f.threshold));
  const labels = examples.map((e) => e.row.label);
  const pos = z.filter((_, i) => labels[i] === 1);
  const neg = z.filter((_, i) => labels[i] === 0);
  const hard = z.filter((_, i) => examples[i].row.hard_negative === true);
  const t = thresholdFor(neg, 0.01);
  return {
    rows: examples.length,
    positives: pos.length,
    negatives: neg.length,
    auc: round(rocAuc(z, labels)),
    tprAt1pctFpr: round(rate(pos, t)),
    hardNegativeFpr: round(rate(hard, t)),
    shift: round(t),
    bySlice: groupRates(examples, z, t, (e) => e.row.slice ?? '(none)'),
    byLanguage: groupRates(examples, z, t, (e) => e.row.lang ?? '(none)'),
    byFamily: groupRates(examples, z, t, (e) => e.row.family),
  };
}

export interface LosoSummary {
  /** The headline (see PooledLoso). */
  pooled: PooledLoso;
  /** Mean TPR over the families that have injections (each at its fold's 1%-FPR threshold). */
  averageTpr: number;
  /** Mean FPR over the families that have benign rows. */
  averageFpr: number;
  families: { family: string; positives: number; negatives: number; tpr: number; fpr: number }[];
  /** Out-of-source rates per slice (each row at its fold's threshold). */
  slices: SliceRate[];
  /** Out-of-source FPR on hard negatives. */
  hardNegativeFpr: number;
}

export function losoSummary(folds: readonly FoldResult[]): LosoSummary {
  const withPos = folds.filter((f) => f.positives > 0);
  const withNeg = folds.filter((f) => f.negatives > 0);
  const examples = folds.flatMap((f) => f.examples);
  const logits = folds.flatMap((f) => f.logits);
  const thresholds = folds.flatMap((f) => f.logits.map(() => f.threshold));
  const hard = examples.map((e, i) => i).filter((i) => examples[i].row.hard_negative === true);
  return {
    pooled: pooledLoso(folds),
    averageTpr: round(withPos.reduce((s, f) => s + f.tpr, 0) / withPos.length),
    averageFpr: round(withNeg.reduce((s, f) => s + f.fpr, 0) / withNeg.length),
    families: folds.map((f) => ({
      family: f.family,
      positives: f.positives,
      negatives: f.negatives,
      tpr: round(f.tpr),
      fpr: round(f.fpr),
    })),
    slices: slices(examples, logits, (i) => thresholds[i]),
    hardNegativeFpr: round(hard.filter((i) => logits[i] >= thresholds[i]).length / hard.length),
  };
}
