/**
 * Pure helpers for measuring the detector on labeled data (used by
 * scripts/eval-injection.ts, injection-training.ts and the other injection scripts).
 */

export interface LabeledRow {
  id?: string;
  text: string;
  /** 1 = injection or jailbreak, 0 = benign. */
  label: 0 | 1;
  slice?: string;
  hard_negative?: boolean;
  lang?: string;
  /** Dataset the row came from (leave-one-source-out groups by it). */
  source?: string;
}

/** Parses JSONL; throws with the line number on a malformed row. Blank lines are skipped. */
export function parseJsonl(content: string): LabeledRow[] {
  const rows: LabeledRow[] = [];
  content.split('\n').forEach((line, i) => {
    if (line.trim() === '') {
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new Error(`line ${i + 1}: not valid JSON`);
    }
    const r = raw as Record<string, unknown>;
    const label = r.label === true ? 1 : r.label === false ? 0 : Number(r.label);
    if (typeof r.text !== 'string' || (label !== 0 && label !== 1)) {
      throw new Error(`line ${i + 1}: needs a string "text" and a "label" of 0 or 1`);
    }
    rows.push({
      id: typeof r.id === 'string' ? r.id : undefined,
      text: r.text,
      label,
      slice: typeof r.slice === 'string' ? r.slice : undefined,
      hard_negative: r.hard_negative === true,
      lang: typeof r.lang === 'string' ? r.lang : undefined,
      source: typeof r.source === 'string' ? r.source : undefined,
    });
  });
  return rows;
}

/** Deterministic split: FNV-1a of the id (or text), bucket in [0, 1). */
export function splitBucket(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 0x100000000;
}

/** ROC AUC (Mann-Whitney U with average ranks for ties). NaN without both classes. */
export function rocAuc(scores: readonly number[], labels: readonly (0 | 1)[]): number {
  const order = scores.map((s, i) => ({ s, y: labels[i] })).sort((a, b) => a.s - b.s);
  let rankSumPos = 0;
  let pos = 0;
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j < order.length && order[j].s === order[i].s) {
      j += 1;
    }
    const avgRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k += 1) {
      if (order[k].y === 1) {
        rankSumPos += avgRank;
        pos += 1;
      }
    }
    i = j;
  }
  const neg = order.length - pos;
  if (pos === 0 || neg === 0) {
    return NaN;
  }
  return (rankSumPos - (pos * (pos + 1)) / 2) / (pos * neg);
}

/**
 * The lowest threshold t (predict injection when score >= t) whose false-positive rate on
 * `negatives` is at most `maxFpr`. Ties are kept together, so the achieved FPR may be lower.
 */
export function thresholdAtFpr(negatives: readonly number[], maxFpr: number): number {
  const sorted = [...negatives].sort((a, b) => b - a);
  const allowed = Math.floor(maxFpr * sorted.length);
  if (allowed >= sorted.length) {
    return -Infinity;
  }
  // Predicting at t = sorted[allowed] + epsilon flags exactly the scores above sorted[allowed].
  const boundary = sorted[allowed];
  const above = sorted.filter((s) => s > boundary);
  return above.length === 0 ? Infinity : Math.min(...above);
}

export function rateAtOrAbove(scores: readonly number[], threshold: number): number {
  if (scores.length === 0) {
    return NaN;
  }
  return scores.filter((s) => s >= threshold).length / scores.length;
}

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) {
    return NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx];
}

export interface SliceReport {
  slice: string;
  count: number;
  label: 0 | 1 | 'mixed';
  /** TPR for positive slices, FPR for negative ones, at the default threshold. */
  rateAtDefault: number;
  rateAt5pctFpr: number;
  meanScore: number;
}

export interface QualityReport {
  rows: number;
  positives: number;
  negatives: number;
  auc: number;
  defaultThreshold: number;
  tprAtDefault: number;
  fprAtDefault: number;
  thresholdAt1pctFpr: number;
  tprAt1pctFpr: number;
  fprAt1pctThreshold: number;
  thresholdAt5pctFpr: number;
  tprAt5pctFpr: number;
  fprAt5pctThreshold: number;
  hardNegatives: number;
  hardNegativeFprAtDefault: number;
  hardNegativeFprAt5pctThreshold: number;
  slices: SliceReport[];
}

export function qualityReport(
  rows: readonly LabeledRow[],
  scores: readonly number[],
  defaultThreshold: number,
): QualityReport {
  const labels = rows.map((r) => r.label);
  const pos = scores.filter((_, i) => labels[i] === 1);
  const neg = scores.filter((_, i) => labels[i] === 0);
  const hard = scores.filter((_, i) => rows[i].hard_negative === true);
  const t1 = thresholdAtFpr(neg, 0.01);
  const t5 = thresholdAtFpr(neg, 0.05);

  const bySlice = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const key = r.slice ?? '(none)';
    const list = bySlice.get(key) ?? [];
    list.push(i);
    bySlice.set(key, list);
  });
  const slices: SliceReport[] = [...bySlice.entries()]
    .map(([slice, idx]) => {
      const s = idx.map((i) => scores[i]);
      const ys = new Set(idx.map((i) => labels[i]));
      const label: 0 | 1 | 'mixed' = ys.size > 1 ? 'mixed' : (labels[idx[0]] ?? 0);
      return {
        slice,
        count: idx.length,
        label,
        rateAtDefault: rateAtOrAbove(s, defaultThreshold),
        rateAt5pctFpr: rateAtOrAbove(s, t5),
        meanScore: s.reduce((a, b) => a + b, 0) / s.length,
      };
    })
    .sort((a, b) => a.slice.localeCompare(b.slice));

  return {
    rows: rows.length,
    positives: pos.length,
    negatives: neg.length,
    auc: rocAuc(scores, labels),
    defaultThreshold,
    tprAtDefault: rateAtOrAbove(pos, defaultThreshold),
    fprAtDefault: rateAtOrAbove(neg, defaultThreshold),
    thresholdAt1pctFpr: t1,
    tprAt1pctFpr: rateAtOrAbove(pos, t1),
    fprAt1pctThreshold: rateAtOrAbove(neg, t1),
    thresholdAt5pctFpr: t5,
    tprAt5pctFpr: rateAtOrAbove(pos, t5),
    fprAt5pctThreshold: rateAtOrAbove(neg, t5),
    hardNegatives: hard.length,
    hardNegativeFprAtDefault: rateAtOrAbove(hard, defaultThreshold),
    hardNegativeFprAt5pctThreshold: rateAtOrAbove(hard, t5),
    slices,
  };
}
