import type { NormalizedText } from './normalize';
import { AnchoredMatcher, forEachMatch } from './matcher';
import { SIGNALS, type PatternSpec, type SignalName } from './signals';

/**
 * Runs the hand-written signal table (signals.ts) over one normalized view. The signals are
 * features of the trained classifier (model/) and its explanation: each hit keeps where it
 * matched, so the classifier can credit it to the window that contains it.
 */

export const EVIDENCE_CHARS = 60;

/** Upper bound on matches inspected per pattern (near / minDistinct checks). */
const MAX_MATCHES_PER_PATTERN = 64;

/** One signal found in a view: the first matched text and where it starts. */
export interface SignalHit {
  match: string;
  index: number;
}

export function evidenceOf(match: string, prefix = ''): string {
  const flat = `${prefix}${match.replace(/\s+/g, ' ').trim()}`;
  return flat.length <= EVIDENCE_CHARS ? flat : `${flat.slice(0, EVIDENCE_CHARS - 1)}…`;
}

interface CompiledSpec {
  signal: SignalName;
  spec: PatternSpec;
  /** Index into MATCHER.patterns. */
  pattern: number;
}

const COMPILED: CompiledSpec[] = [];
const MATCHER = new AnchoredMatcher(
  SIGNALS.flatMap((def) =>
    def.patterns.map((spec) => {
      COMPILED.push({ signal: def.name, spec, pattern: COMPILED.length });
      return spec.alts;
    }),
  ),
);

function matchSpec(c: CompiledSpec, text: string, candidates: number[][]): SignalHit | undefined {
  const { spec } = c;
  const pattern = MATCHER.patterns[c.pattern];
  const cands = candidates[c.pattern];
  let found: SignalHit | undefined;
  if (spec.near === undefined && spec.minDistinct === undefined) {
    forEachMatch(pattern, cands, text, 1, (match, index) => {
      found = { match, index };
      return true;
    });
    return found;
  }
  const seen = new Set<string>();
  forEachMatch(pattern, cands, text, MAX_MATCHES_PER_PATTERN, (m, index) => {
    if (spec.minDistinct !== undefined) {
      seen.add(m);
      if (seen.size >= spec.minDistinct) {
        found = { match: [...seen].join(', '), index };
      }
    } else if (spec.near !== undefined) {
      const w = spec.window ?? 200;
      const around = text.slice(Math.max(0, index - w), index + m.length + w);
      spec.near.lastIndex = 0;
      if (spec.near.test(around)) {
        found = { match: m, index };
      }
      spec.near.lastIndex = 0;
    }
    return found !== undefined;
  });
  return found;
}

/**
 * Signals firing on one normalized view, first hit per signal. `squashed` (the letters-only
 * view) catches a few phrases split inside words; its hits have no position in `text` and
 * are placed at 0.
 */
export function matchView(text: string, squashed: string | undefined): Map<SignalName, SignalHit> {
  const fired = new Map<SignalName, SignalHit>();
  const candidates = MATCHER.candidates(text);
  for (const c of COMPILED) {
    if (fired.has(c.signal)) {
      continue;
    }
    const hit = matchSpec(c, text, candidates);
    if (hit !== undefined) {
      fired.set(c.signal, hit);
    }
  }
  if (squashed !== undefined) {
    for (const def of SIGNALS) {
      if (fired.has(def.name) || def.compact === undefined) {
        continue;
      }
      for (const compact of def.compact) {
        const m = compact.exec(squashed);
        if (m !== null) {
          fired.set(def.name, { match: m[0], index: 0 });
          break;
        }
      }
    }
  }
  return fired;
}

/** A short description of the obfuscation seen, or undefined when there was none worth noting. */
export function describeObfuscation(n: NormalizedText): string | undefined {
  const o = n.obfuscation;
  const parts: string[] = [];
  if (o.zeroWidth >= 2) {
    parts.push(`zero-width x${o.zeroWidth}`);
  }
  if (o.tagChars > 0) {
    parts.push(`tag chars x${o.tagChars}`);
  }
  if (o.mixedScriptWords >= 2) {
    parts.push(`homoglyph words x${o.mixedScriptWords}`);
  }
  if (o.leetTokens >= 2) {
    parts.push(`leetspeak x${o.leetTokens}`);
  }
  if (o.spacedRuns >= 1) {
    parts.push(`spaced letters x${o.spacedRuns}`);
  }
  if (o.emojiLetters >= 3) {
    parts.push(`emoji letters x${o.emojiLetters}`);
  }
  if (n.decoded.length > 0) {
    parts.push(`decoded ${n.decoded.map((d) => d.kind).join('+')}`);
  }
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/** Compiles the signal regexes ahead of the first request. */
export function warmUpSignals(sample: string): void {
  MATCHER.warmUp(sample);
  for (const c of COMPILED) {
    if (c.spec.near !== undefined) {
      c.spec.near.lastIndex = 0;
      c.spec.near.test(sample);
      c.spec.near.test(sample);
      c.spec.near.lastIndex = 0;
    }
  }
}
