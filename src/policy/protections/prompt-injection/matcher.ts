/**
 * Anchored matching. Running two dozen alternation-heavy regexes over every character of a
 * long text costs a pass each; instead the text is tokenized once, each token is looked up
 * among the anchor words (the literal words that patterns start with), and the pattern's
 * sticky regex is tried only at those token starts. Alternatives that do not start with a
 * literal word (delimiters such as `<|im_start|>`) fall back to one ordinary regex pass.
 *
 * Anchors are derived from the pattern source itself, so a pattern cannot silently lose its
 * anchor: an alternative whose leading word cannot be determined becomes a fallback.
 */

export interface CompiledAlt {
  source: string;
  sticky: RegExp;
}

export interface CompiledPattern {
  anchored: CompiledAlt[];
  /** Alternatives without a usable anchor, joined into one global regex. */
  fallback: RegExp | undefined;
}

interface AnchorRef {
  pattern: number;
  alt: number;
}

export interface Anchors {
  words: string[];
  prefixes: string[];
}

/** Shortest leading literal accepted as a prefix anchor (shorter ones must be whole words). */
const MIN_PREFIX = 3;
/** Tokens longer than this are only checked against prefix anchors. */
const MAX_EXACT = 24;

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

/** Index of the `)` closing the group that opens at `open`, or -1. */
function closeParen(src: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < src.length; i += 1) {
    const c = src[i];
    if (c === '\\') {
      i += 1;
    } else if (inClass) {
      if (c === ']') {
        inClass = false;
      }
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      depth += 1;
    } else if (c === ')') {
      depth -= 1;
      if (depth === 0) {
        return i;
      }
    }
  }
  return -1;
}

/** Splits on `|` at nesting depth 0. */
function splitTopLevel(src: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < src.length; i += 1) {
    const c = src[i];
    if (c === '\\') {
      i += 1;
    } else if (inClass) {
      if (c === ']') {
        inClass = false;
      }
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      depth += 1;
    } else if (c === ')') {
      depth -= 1;
    } else if (c === '|' && depth === 0) {
      parts.push(src.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(src.slice(start));
  return parts;
}

/** True when what follows a literal word certainly ends the token there. */
function endsToken(rest: string): boolean {
  if (rest === '') {
    return true;
  }
  const quantified = (len: number): boolean => /^[?*]|^\{0/.test(rest.slice(len));
  if (rest.startsWith('\\b') || rest.startsWith('\\s') || rest.startsWith('\\W')) {
    return !quantified(2);
  }
  if (rest.startsWith('[^a-z0-9]')) {
    return !quantified('[^a-z0-9]'.length);
  }
  if (rest.startsWith('\\')) {
    // An escaped punctuation character such as \. or \(.
    return !/[a-zA-Z0-9]/.test(rest[1] ?? 'a') && !quantified(2);
  }
  return !/[a-z0-9([.]/.test(rest[0]) && !quantified(1);
}

/** Leading literal word of `branch` followed by `after` (what comes after the branch). */
function branchAnchor(branch: string, after: string): { word: string; exact: boolean } | undefined {
  let i = 0;
  while (i < branch.length && isWordChar(branch[i])) {
    i += 1;
  }
  if (i === 0) {
    return undefined;
  }
  const rest = i < branch.length ? branch.slice(i) : after;
  const word = branch.slice(0, i);
  // A quantifier right after the literal makes its last character optional.
  if (/^[?*]|^\{0/.test(rest)) {
    return word.length - 1 >= MIN_PREFIX ? { word: word.slice(0, -1), exact: false } : undefined;
  }
  if (endsToken(rest)) {
    return { word, exact: true };
  }
  return word.length >= MIN_PREFIX ? { word, exact: false } : undefined;
}

/** Strips a leading `\\b` and leading lookbehinds: the anchor is the first consumed word. */
function stripLeadingAssertions(alt: string): string | undefined {
  let src = alt;
  for (;;) {
    if (src.startsWith('\\b')) {
      src = src.slice(2);
    } else if (src.startsWith('(?<=') || src.startsWith('(?<!')) {
      const close = closeParen(src, 0);
      if (close < 0) {
        return undefined;
      }
      src = src.slice(close + 1);
    } else {
      return src;
    }
  }
}

/** Anchor words of one alternative, or undefined when it has to be a fallback. */
export function anchorsOf(alt: string): Anchors | undefined {
  const src = stripLeadingAssertions(alt);
  if (src === undefined) {
    return undefined;
  }
  const words: string[] = [];
  const prefixes: string[] = [];
  const add = (a: { word: string; exact: boolean }): void => {
    (a.exact ? words : prefixes).push(a.word);
  };
  if (src.startsWith('(?:')) {
    const close = closeParen(src, 0);
    if (close < 0) {
      return undefined;
    }
    const after = src.slice(close + 1);
    if (/^[?*]|^\{0/.test(after)) {
      return undefined;
    }
    for (const branch of splitTopLevel(src.slice(3, close))) {
      const a = branchAnchor(branch, after);
      if (a === undefined) {
        return undefined;
      }
      add(a);
    }
    return { words, prefixes };
  }
  const a = branchAnchor(src, '');
  if (a === undefined) {
    return undefined;
  }
  add(a);
  return { words, prefixes };
}

interface ExactEntry {
  word: string;
  refs: AnchorRef[];
}

function isTokenCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** Polynomial hash of text[i..j), the same one the token scanner computes incrementally. */
function hashWord(word: string): number {
  let h = 0;
  for (let k = 0; k < word.length; k += 1) {
    h = (Math.imul(h, 31) + word.charCodeAt(k)) | 0;
  }
  return h;
}

function prefixKey(text: string, i: number): number {
  return (text.charCodeAt(i) << 16) | (text.charCodeAt(i + 1) << 8) | text.charCodeAt(i + 2);
}

/**
 * A set of patterns compiled for anchored matching. Each pattern is a list of regex
 * alternatives (sources, matched against lower-case normalized text).
 */
export class AnchoredMatcher {
  readonly patterns: CompiledPattern[] = [];
  private readonly exact = new Map<number, ExactEntry[]>();
  private readonly prefix = new Map<number, { prefix: string; ref: AnchorRef }[]>();

  constructor(patterns: readonly (readonly string[])[]) {
    patterns.forEach((alts, pi) => {
      const anchored: CompiledAlt[] = [];
      const fallbacks: string[] = [];
      for (const source of alts.flatMap(splitTopLevel)) {
        const anchors = anchorsOf(source);
        if (anchors === undefined) {
          fallbacks.push(source);
          continue;
        }
        const ref: AnchorRef = { pattern: pi, alt: anchored.length };
        anchored.push({ source, sticky: new RegExp(source, 'y') });
        for (const w of new Set(anchors.words)) {
          const bucket = this.exact.get(hashWord(w)) ?? [];
          const entry = bucket.find((e) => e.word === w);
          if (entry === undefined) {
            bucket.push({ word: w, refs: [ref] });
          } else {
            entry.refs.push(ref);
          }
          this.exact.set(hashWord(w), bucket);
        }
        for (const pre of new Set(anchors.prefixes)) {
          const key = prefixKey(pre, 0);
          const list = this.prefix.get(key) ?? [];
          list.push({ prefix: pre, ref });
          this.prefix.set(key, list);
        }
      }
      this.patterns.push({
        anchored,
        fallback: fallbacks.length > 0 ? new RegExp(fallbacks.join('|'), 'g') : undefined,
      });
    });
  }

  /**
   * Runs every regex twice so V8 compiles it (and tiers it up to native code) now rather
   * than on the first request that happens to reach it; compiling a large alternation
   * takes milliseconds.
   */
  warmUp(sample: string): void {
    for (const p of this.patterns) {
      for (const alt of p.anchored) {
        for (let i = 0; i < 2; i += 1) {
          alt.sticky.lastIndex = 0;
          alt.sticky.exec(sample);
        }
      }
      for (let i = 0; i < 2 && p.fallback !== undefined; i += 1) {
        p.fallback.lastIndex = 0;
        p.fallback.exec(sample);
        p.fallback.lastIndex = 0;
      }
    }
  }

  /**
   * Candidate start positions per pattern, as flat [altIndex, position, ...] lists in text
   * order. One linear pass: each token is hashed while it is scanned.
   */
  candidates(text: string): number[][] {
    const out: number[][] = this.patterns.map(() => []);
    const n = text.length;
    let i = 0;
    while (i < n) {
      if (!isTokenCode(text.charCodeAt(i))) {
        i += 1;
        continue;
      }
      let h = 0;
      let j = i;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (!isTokenCode(d)) {
          break;
        }
        h = (Math.imul(h, 31) + d) | 0;
        j += 1;
      }
      const len = j - i;
      if (len <= MAX_EXACT) {
        const bucket = this.exact.get(h);
        if (bucket !== undefined) {
          for (const e of bucket) {
            if (e.word.length === len && text.startsWith(e.word, i)) {
              for (const r of e.refs) {
                out[r.pattern].push(r.alt, i);
              }
            }
          }
        }
      }
      if (len >= MIN_PREFIX) {
        const list = this.prefix.get(prefixKey(text, i));
        if (list !== undefined) {
          for (const { prefix, ref } of list) {
            if (prefix.length <= len && text.startsWith(prefix, i)) {
              out[ref.pattern].push(ref.alt, i);
            }
          }
        }
      }
      i = j;
    }
    return out;
  }
}

/**
 * Iterates the matches of one compiled pattern: anchored candidates in text order, then the
 * fallback regex. Stops when `visit` returns true or after `limit` matches.
 */
export function forEachMatch(
  pattern: CompiledPattern,
  candidates: readonly number[],
  text: string,
  limit: number,
  visit: (match: string, index: number) => boolean,
): void {
  let seen = 0;
  for (let k = 0; k + 1 < candidates.length; k += 2) {
    const re = pattern.anchored[candidates[k]].sticky;
    re.lastIndex = candidates[k + 1];
    const m = re.exec(text);
    if (m !== null && m[0] !== '') {
      seen += 1;
      if (visit(m[0], m.index) || seen >= limit) {
        return;
      }
    }
  }
  const fb = pattern.fallback;
  if (fb === undefined) {
    return;
  }
  fb.lastIndex = 0;
  while (seen < limit) {
    const m = fb.exec(text);
    if (m === null) {
      break;
    }
    if (m[0] === '') {
      fb.lastIndex += 1;
      continue;
    }
    seen += 1;
    if (visit(m[0], m.index)) {
      break;
    }
  }
  fb.lastIndex = 0;
}
