/**
 * Training and validation of the prompt-injection classifier (model/ in the protection's
 * folder), shared by scripts/train-injection.ts and scripts/eval-injection.ts. Pure
 * TypeScript, deterministic (seeded shuffles), no dependencies: CI never runs it, but anyone
 * can reproduce the committed weights with `npm run train:injection`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DENSE_FEATURES,
  analyzeText,
  type TextView,
} from '../src/policy/protections/prompt-injection/model/analysis';
import { copyStream } from '../src/policy/protections/prompt-injection/model/features';
import {
  scoreView,
  type LinearParams,
  type WindowScore,
} from '../src/policy/protections/prompt-injection/model/linear';
import { own } from '../src/common/own';
import { mixRows, perturbRows, plantRows, rng, type AugmentRow } from './injection-augment';
import { templateRows } from './injection/templates';
import {
  parseJsonl,
  splitBucket,
  type LabeledRow,
} from '../src/policy/protections/prompt-injection/evaluation';

export const DATA_DIR = resolve(__dirname, '..', '..', 'shared', 'data', 'prompt-injection');
export const DATA_FILES = ['train.jsonl', 'dev.jsonl', 'train-extra.jsonl'] as const;
/** Rows whose id hashes below this train the shipped model; the rest are held out. */
export const FIT_FRACTION = 0.7;

export interface Row extends LabeledRow {
  file: string;
  family: string;
  holdout: boolean;
}

/** A featurized row: its views (copied n-gram streams) and the text-wide obfuscation. */
export interface Example {
  row: Row;
  views: TextView[];
  obfuscation: string | undefined;
}

export interface TrainOptions {
  bits: number;
  window: number;
  stride: number;
  epochs: number;
  /** AdaGrad learning rate. */
  lr: number;
  l2: number;
  /** Per-row weight ∝ count(source)^-sourcePower, then both classes get equal total weight. */
  sourcePower: number;
  /**
   * Share of updates that see the signals alone (no n-grams), so the signal weights carry
   * evidence on their own where the n-grams know nothing (other languages, new phrasing).
   */
  signalDropout: number;
  /** Synthetic texts added per class (see augment); 0 for none. */
  augment: number;
  /** Injections planted inside benign documents (pairs, see injection-augment.ts). */
  plant: number;
  /** Casing/whitespace/homoglyph/encoding pairs (see injection-augment.ts). */
  perturb: number;
  /** Cross-language benign + injection pairs (see injection-augment.ts). */
  mix: number;
  /** Hand-written multilingual template pairs (see injection/templates.ts). */
  templates: number;
  seed: number;
}

export const DEFAULT_OPTIONS: TrainOptions = {
  bits: 21,
  window: 512,
  stride: 128,
  epochs: 8,
  lr: 0.05,
  l2: 1e-6,
  sourcePower: 0.5,
  signalDropout: 0.5,
  augment: 1500,
  plant: 2000,
  perturb: 1000,
  mix: 1000,
  templates: 10000,
  seed: 1,
};

/** Which data the scripts read: train-extra.jsonl or not, and source prefixes left out. */
export interface DataOptions {
  extra: boolean;
  /** Rows whose source starts with one of these are dropped (ablations). */
  drop: string[];
}

export const DEFAULT_DATA: DataOptions = { extra: true, drop: [] };

/**
 * Leave-one-source-out groups: sources cut from one upstream dataset (deepset's train and
 * test, the monthly in-the-wild jailbreak dumps, spikee's files...) go out together, or
 * their near-duplicates would leak into training.
 */
export function familyOf(source: string): string {
  const prefixes = [
    'deepset',
    'inthewild_jailbreak',
    'spikee',
    'agentdojo',
    'pyrit',
    'xsafety',
    'xquad',
    'gpteacher',
    'tasktracker',
    'humaneval',
  ];
  // The MGSM questions and their injected twins share the questions; the same-language
  // override phrases of ml_override_* are also planted in some xquad_injected_* rows.
  if (source === 'mgsm' || source.startsWith('ml_override')) {
    return 'ml_override';
  }
  return prefixes.find((p) => source.startsWith(p)) ?? source;
}

/**
 * Families that share text with another family (the override phrases of ml_override_* in
 * xquad_injected_*): when one is left out, the other leaves training too, or the phrases
 * would leak into the fold.
 */
export const COUPLED_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  ml_override: ['xquad'],
  xquad: ['ml_override'],
};

/** Reads train.jsonl and dev.jsonl from the shared data folder (never copied into the repo). */
export function loadRows(data: DataOptions = DEFAULT_DATA, dir: string = DATA_DIR): Row[] {
  const rows: Row[] = [];
  for (const file of DATA_FILES) {
    if (file === 'train-extra.jsonl' && !data.extra) {
      continue;
    }
    const path = resolve(dir, file);
    if (!existsSync(path)) {
      throw new Error(
        `${path} not found: the training data lives in ../shared/data/prompt-injection`,
      );
    }
    for (const r of parseJsonl(readFileSync(path, 'utf8'))) {
      const source = r.source ?? file;
      if (data.drop.some((prefix) => source.startsWith(prefix))) {
        continue;
      }
      rows.push({
        ...r,
        source,
        file,
        family: familyOf(source),
        holdout: splitBucket(r.id ?? r.text) >= FIT_FRACTION,
      });
    }
  }
  return rows;
}

/** Normalizes and hashes every row once; training epochs reuse the streams. */
export function featurize(
  rows: readonly Row[],
  shape: { bits: number; window: number },
): Example[] {
  return rows.map((row) => {
    const views: TextView[] = [];
    const summary = analyzeText(row.text, shape, (view) => {
      views.push({ ...view, grams: copyStream(view.grams) });
    });
    return { row, views, obfuscation: summary.obfuscation };
  });
}

/** Float weights in training; the same scoring code as the gateway (scale 1). */
export interface FloatModel extends LinearParams {
  grams: Float32Array;
  dense: Float64Array;
}

function bestWindow(p: LinearParams, ex: Example): { view: TextView; score: WindowScore } {
  let best: { view: TextView; score: WindowScore } | undefined;
  for (const view of ex.views) {
    const score = scoreView(p, view, ex.obfuscation);
    if (best === undefined || score.logit > best.score.logit) {
      best = { view, score };
    }
  }
  if (best === undefined) {
    throw new Error(`row ${ex.row.id ?? '?'} has no view`);
  }
  return best;
}

/** The logit of a featurized text: the best window of any view. */
export function logitOf(p: LinearParams, ex: Example): number {
  return bestWindow(p, ex).score.logit;
}

function rowWeights(examples: readonly Example[], sourcePower: number): Float64Array {
  const perSource = new Map<string, number>();
  for (const ex of examples) {
    const key = `${ex.row.source ?? ''}:${ex.row.label}`;
    perSource.set(key, (perSource.get(key) ?? 0) + 1);
  }
  const w = new Float64Array(examples.length);
  const total = [0, 0];
  examples.forEach((ex, i) => {
    w[i] = (perSource.get(`${ex.row.source ?? ''}:${ex.row.label}`) ?? 1) ** -sourcePower;
    total[ex.row.label] += w[i];
  });
  // Equal total weight per class, mean weight 1.
  examples.forEach((ex, i) => {
    w[i] *= examples.length / 2 / total[ex.row.label];
  });
  return w;
}

const CARRIER_MIN_CHARS = 600;
const CARRIER_MAX_CHARS = 3000;
const BURIED_MAX_CHARS = 1000;

/**
 * Synthetic long texts from the training rows themselves: benign rows joined into a longer
 * carrier, half of them (label 1) with a short injection row inserted between two of the
 * pieces. Without them the model learns that ordinary prose around an injection is evidence
 * of innocence and an injection buried in a document is diluted; with the joined benign
 * carriers (label 0) joining itself is not a cue. Built from the rows being trained on only,
 * so a leave-one-source-out fold never sees its left-out source.
 */
export function augment(examples: readonly Example[], o: TrainOptions): Example[] {
  const { augment: count, seed } = o;
  const benign = examples.filter((e) => e.row.label === 0);
  const short = examples.filter((e) => e.row.label === 1 && e.row.text.length <= BURIED_MAX_CHARS);
  const given = examples.map((e) => e.row);
  const extra: AugmentRow[] = [
    ...plantRows(given, o.plant, seed),
    ...perturbRows(given, o.perturb, seed),
    ...mixRows(given, o.mix, seed),
    ...templateRows(given, o.templates, seed),
  ];
  const rows: Row[] = extra.map((r) => ({
    ...r,
    source: 'augmented',
    file: 'augmented',
    family: 'augmented',
    holdout: false,
  }));
  if (count === 0 || benign.length === 0 || short.length === 0) {
    return featurize(rows, o);
  }
  const random = rng(seed ^ 0x5eed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  for (let i = 0; i < 2 * count; i += 1) {
    const target = CARRIER_MIN_CHARS + random() * (CARRIER_MAX_CHARS - CARRIER_MIN_CHARS);
    const pieces: string[] = [];
    let length = 0;
    while (length < target) {
      const piece = pick(benign).row.text;
      pieces.push(piece);
      length += piece.length;
    }
    const label: 0 | 1 = i % 2 === 0 ? 1 : 0;
    if (label === 1) {
      pieces.splice(Math.floor(random() * (pieces.length + 1)), 0, pick(short).row.text);
    }
    rows.push({
      id: `augmented-${i}`,
      text: pieces.join('\n\n'),
      label,
      slice: label === 1 ? 'augmented_buried' : 'augmented_carrier',
      source: 'augmented',
      file: 'augmented',
      family: 'augmented',
      holdout: false,
    });
  }
  return featurize(rows, o);
}

/**
 * Logistic regression by AdaGrad over the best window of each text (multiple-instance
 * learning: the label of a long text is carried by its most suspicious window, exactly as
 * the gateway scores it). Signal weights are kept non-negative: a hand-written signal is
 * evidence of an injection, never of innocence.
 */
export function train(given: readonly Example[], o: TrainOptions): FloatModel {
  const examples = [...given, ...augment(given, o)];
  const size = 2 ** o.bits;
  const model: FloatModel = {
    bits: o.bits,
    window: o.window,
    stride: o.stride,
    bias: 0,
    scale: 1,
    grams: new Float32Array(size),
    dense: new Float64Array(DENSE_FEATURES.length),
  };
  const g2 = new Float32Array(size);
  const d2 = new Float64Array(DENSE_FEATURES.length);
  let b2 = 0;
  let signalBias = 0;
  let sb2 = 0;
  const weights = rowWeights(examples, o.sourcePower);
  const order = examples.map((_, i) => i);
  const random = rng(o.seed);
  const eps = 1e-8;
  for (let epoch = 0; epoch < o.epochs; epoch += 1) {
    for (let i = order.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const k of order) {
      const ex = examples[k];
      const { view, score } = bestWindow(model, ex);
      if (o.signalDropout > 0 && random() < o.signalDropout) {
        // Signals alone, with their own bias (not shipped): only the signal weights learn.
        const fired = score.signals.map(({ signal }) => DENSE_FEATURES.indexOf(signal.name));
        const z = signalBias + fired.reduce((sum, d) => sum + model.dense[d], 0);
        const g = (1 / (1 + Math.exp(-z)) - ex.row.label) * weights[k];
        sb2 += g * g;
        signalBias -= (o.lr * g) / Math.sqrt(sb2 + eps);
        for (const d of fired) {
          d2[d] += g * g;
          model.dense[d] = Math.max(0, model.dense[d] - (o.lr * g) / Math.sqrt(d2[d] + eps));
        }
        continue;
      }
      const p = 1 / (1 + Math.exp(-score.logit));
      const g = (p - ex.row.label) * weights[k];
      if (g === 0) {
        continue;
      }
      b2 += g * g;
      model.bias -= (o.lr * g) / Math.sqrt(b2 + eps);
      const n = score.to - score.from;
      if (n > 0) {
        const gn = g / Math.sqrt(n);
        const { ids } = view.grams;
        for (let i = score.from; i < score.to; i += 1) {
          const id = ids[i];
          const grad = gn + o.l2 * model.grams[id];
          g2[id] += grad * grad;
          model.grams[id] -= (o.lr * grad) / Math.sqrt(g2[id] + eps);
        }
      }
      for (const { signal } of score.signals) {
        const d = DENSE_FEATURES.indexOf(signal.name);
        const grad = g + o.l2 * model.dense[d];
        d2[d] += grad * grad;
        model.dense[d] = Math.max(0, model.dense[d] - (o.lr * grad) / Math.sqrt(d2[d] + eps));
      }
    }
  }
  return model;
}

/** int8 weights with one scale (max |w| / 127): 1 byte per bucket. */
export function quantize(grams: Float32Array): { q: Int8Array; scale: number } {
  let max = 0;
  for (const w of grams) {
    max = Math.max(max, Math.abs(w));
  }
  const scale = max > 0 ? max / 127 : 1;
  const q = new Int8Array(grams.length);
  for (let i = 0; i < grams.length; i += 1) {
    q[i] = Math.round(grams[i] / scale);
  }
  return { q, scale };
}

/** Platt scaling: slope and intercept of sigmoid(a·z + c) fitted by Newton's method. */
export function plattFit(
  logits: readonly number[],
  labels: readonly (0 | 1)[],
): { slope: number; intercept: number } {
  let a = 1;
  let c = 0;
  for (let it = 0; it < 50; it += 1) {
    let ga = 0;
    let gc = 0;
    let haa = 0;
    let hac = 0;
    let hcc = 0;
    logits.forEach((z, i) => {
      const p = 1 / (1 + Math.exp(-(a * z + c)));
      const r = p - labels[i];
      const w = Math.max(p * (1 - p), 1e-9);
      ga += r * z;
      gc += r;
      haa += w * z * z;
      hac += w * z;
      hcc += w;
    });
    const det = haa * hcc - hac * hac;
    if (Math.abs(det) < 1e-12) {
      break;
    }
    const da = (hcc * ga - hac * gc) / det;
    const dc = (haa * gc - hac * ga) / det;
    a -= da;
    c -= dc;
    if (Math.abs(da) + Math.abs(dc) < 1e-9) {
      break;
    }
  }
  return { slope: a, intercept: c };
}

/** Leave-one-source-out result for one family. */
export interface FoldResult {
  family: string;
  positives: number;
  negatives: number;
  /** TPR on the family's injections at the fold's 1%-FPR threshold (NaN without any). */
  tpr: number;
  /** FPR on the family's benign rows at that threshold (NaN without any). */
  fpr: number;
  /** The fold's threshold (logit at 1% FPR on the other families' held-out benign rows). */
  threshold: number;
  /** The fold model's logits for the family's rows (out of source). */
  logits: number[];
  examples: Example[];
}

export interface LosoOptions extends TrainOptions {
  /** Only these families are left out in turn (all by default; ablations use a subset). */
  only?: readonly string[];
  /** Called after each fold (progress). */
  onFold?: (fold: FoldResult) => void;
}

function rate(values: readonly number[], threshold: number): number {
  return values.length === 0 ? NaN : values.filter((v) => v >= threshold).length / values.length;
}

/** Lowest threshold with FPR <= maxFpr on `negatives` (same rule as evaluation.thresholdAtFpr). */
export function thresholdFor(negatives: readonly number[], maxFpr: number): number {
  const sorted = [...negatives].sort((a, b) => b - a);
  const allowed = Math.floor(maxFpr * sorted.length);
  if (allowed >= sorted.length) {
    return -Infinity;
  }
  const boundary = sorted[allowed];
  const above = sorted.filter((s) => s > boundary);
  return above.length === 0 ? Infinity : Math.min(...above);
}

/**
 * Leave-one-source-out: for each family, train on the fit split of every other family (and
 * not of the families coupled with it), then set the threshold at 1% FPR on the held-out
 * benign rows of the other families (benign text the fold model never saw) and measure the
 * left-out family at it: TPR on its injections, FPR on its benign rows. Both halves of an
 * unseen source are tested. losoSummary pools the folds for the headline.
 */
export function leaveOneSourceOut(examples: readonly Example[], o: LosoOptions): FoldResult[] {
  const families = [...new Set(examples.map((e) => e.row.family))]
    .filter((f) => o.only === undefined || o.only.includes(f))
    .sort();
  const results: FoldResult[] = [];
  for (const family of families) {
    const out = new Set([family, ...(own(COUPLED_FAMILIES, family) ?? [])]);
    const fit = examples.filter((e) => !out.has(e.row.family) && !e.row.holdout);
    const model = train(fit, o);
    const pool = examples
      .filter((e) => !out.has(e.row.family) && e.row.holdout && e.row.label === 0)
      .map((e) => logitOf(model, e));
    const threshold = thresholdFor(pool, 0.01);
    const tested = examples.filter((e) => e.row.family === family);
    const logits = tested.map((e) => logitOf(model, e));
    const pos = logits.filter((_, i) => tested[i].row.label === 1);
    const neg = logits.filter((_, i) => tested[i].row.label === 0);
    const fold: FoldResult = {
      family,
      positives: pos.length,
      negatives: neg.length,
      tpr: rate(pos, threshold),
      fpr: rate(neg, threshold),
      threshold,
      logits,
      examples: tested,
    };
    o.onFold?.(fold);
    results.push(fold);
  }
  return results;
}
