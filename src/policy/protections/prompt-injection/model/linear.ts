import type { SignalName } from '../signals';
import { DENSE_INDEX, type TextView, type ViewSignal } from './analysis';
import { CHAR_GRAM, windowStarts } from './features';

/**
 * The classifier's logit for one window: bias + (sum of the n-gram weights in the window) /
 * sqrt(n-grams in the window) + the weights of the signals that fired in it (and of the
 * text-wide obfuscation feature). A view is cut into overlapping windows; the best window
 * is the view's score, so an injection buried in a long document is not diluted.
 */

/** Weights and window geometry, from the model file or from the trainer. */
export interface LinearParams {
  bits: number;
  /** Window length and stride, in normalized characters. */
  window: number;
  stride: number;
  bias: number;
  /** Hashed n-gram weights; each multiplied by `scale` (int8 in the file, float in training). */
  grams: ArrayLike<number>;
  scale: number;
  /** By DENSE_FEATURES index. */
  dense: ArrayLike<number>;
}

/** The best window of one view and what made up its logit. */
export interface WindowScore {
  logit: number;
  /** Window bounds in the view's normalized characters. */
  start: number;
  end: number;
  /** The window's n-grams: indices [from, to) of the view's stream (used by the trainer). */
  from: number;
  to: number;
  /** Contributions to the logit of the character and word n-grams of the window. */
  charPart: number;
  wordPart: number;
  /** Signals in the window with their weights (obfuscation included when it applies). */
  signals: { signal: ViewSignal; weight: number }[];
}

function signalsIn(
  p: LinearParams,
  view: TextView,
  start: number,
  end: number,
  single: boolean,
): { signal: ViewSignal; weight: number }[] {
  const out: { signal: ViewSignal; weight: number }[] = [];
  for (const signal of view.signals) {
    if (single || (signal.index >= start && signal.index < end)) {
      out.push({ signal, weight: p.dense[DENSE_INDEX.get(signal.name) ?? 0] });
    }
  }
  return out;
}

/**
 * One prefix-sum buffer reused by every call (scoring is synchronous): a 32 KB text has
 * ~200 K n-grams, and a fresh 1.6 MB array per call would leave the collector the work.
 */
let prefixBuffer = new Float64Array(4096);

function prefixScratch(length: number): Float64Array {
  if (prefixBuffer.length < length) {
    prefixBuffer = new Float64Array(Math.max(length, prefixBuffer.length * 2));
  }
  return prefixBuffer;
}

/** Index of the first gram with pos >= at, from `from` on (pos is non-decreasing). */
function seek(pos: Int32Array, count: number, from: number, at: number): number {
  let i = from;
  while (i < count && pos[i] < at) {
    i += 1;
  }
  return i;
}

/**
 * Scores every window of `view` and returns the best. `obfuscation` (text-wide) is added to
 * every window. Cost: one pass over the view's n-grams plus one per window over its signals.
 */
export function scoreView(
  p: LinearParams,
  view: TextView,
  obfuscation: string | undefined,
): WindowScore {
  const { ids, pos, kind, count } = view.grams;
  const { grams, scale } = p;
  const starts = windowStarts(view.text.length, p.window, p.stride);
  const single = starts.length === 1;
  const extra: { signal: ViewSignal; weight: number }[] = [];
  if (obfuscation !== undefined) {
    const name: SignalName = 'obfuscation';
    extra.push({
      signal: { name, index: 0, evidence: obfuscation },
      weight: p.dense[DENSE_INDEX.get(name) ?? 0],
    });
  }
  const extraSum = extra.reduce((s, e) => s + e.weight, 0);
  let best: { logit: number; start: number; end: number; from: number; to: number } | undefined;
  if (single) {
    let sum = 0;
    for (let i = 0; i < count; i += 1) {
      sum += grams[ids[i]];
    }
    const norm = count > 0 ? (sum * scale) / Math.sqrt(count) : 0;
    best = { logit: norm, start: 0, end: view.text.length, from: 0, to: count };
  } else {
    // Prefix sums over the stream make each window O(1) apart from locating its bounds.
    const prefix = prefixScratch(count + 1);
    for (let i = 0; i < count; i += 1) {
      prefix[i + 1] = prefix[i] + grams[ids[i]];
    }
    let from = 0;
    let to = 0;
    for (const start of starts) {
      const end = start + p.window;
      from = seek(pos, count, from, start);
      to = seek(pos, count, Math.max(to, from), end);
      const n = to - from;
      const norm = n > 0 ? ((prefix[to] - prefix[from]) * scale) / Math.sqrt(n) : 0;
      let sig = 0;
      for (const s of view.signals) {
        if (s.index >= start && s.index < end) {
          sig += p.dense[DENSE_INDEX.get(s.name) ?? 0];
        }
      }
      if (best === undefined || norm + sig > best.logit) {
        best = { logit: norm + sig, start, end, from, to };
      }
    }
  }
  const chosen = best ?? { logit: 0, start: 0, end: 0, from: 0, to: 0 };
  const signals = signalsIn(p, view, chosen.start, chosen.end, single);
  let charSum = 0;
  let wordSum = 0;
  for (let i = chosen.from; i < chosen.to; i += 1) {
    if (kind[i] === CHAR_GRAM) {
      charSum += grams[ids[i]];
    } else {
      wordSum += grams[ids[i]];
    }
  }
  const n = chosen.to - chosen.from;
  const norm = n > 0 ? scale / Math.sqrt(n) : 0;
  const signalSum = signals.reduce((s, e) => s + e.weight, 0);
  return {
    logit: p.bias + charSum * norm + wordSum * norm + signalSum + extraSum,
    start: chosen.start,
    end: chosen.end,
    from: chosen.from,
    to: chosen.to,
    charPart: charSum * norm,
    wordPart: wordSum * norm,
    signals: [...signals, ...extra],
  };
}
