import type { FilterAction } from './settings';
import { foldCodePoint, toWords, WordSplitter } from './words';

/**
 * Streaming leak matcher over one channel of model output.
 *
 * Text and secrets are folded to words (see words.ts). Two checks run side by side:
 * - words: a leak is `need` consecutive output words equal to `need` consecutive words of a
 *   secret, `need` = min(minOverlap, the secret's word count);
 * - letters: a leak is `max(6 × minOverlap, 40)` consecutive letters and digits of the output,
 *   starting at the start of an output word, equal to letters and digits of a secret, all
 *   else ignored (words glued together or spaced out letter by letter).
 *
 * Each check is a suffix automaton of the secrets (linear size, built once per distinct set of
 * secrets and cached) and a tracker of the output's *head*: the earliest output position
 * (word, or word start for letters) from which the output so far is still the beginning of a
 * leak. The head only moves forward; each output symbol moves it with amortized O(1)
 * automaton steps, whatever the secrets repeat. The held tail is exactly the text from the
 * earliest head, a pending redaction, or an incomplete escape / surrogate pair.
 */

export type LeakChannelKind = 'text' | 'json';

export interface LeakInfo {
  /** Output words in the leaked run. */
  words: number;
}

export interface MatchResult {
  /** Raw text that can go out now (redacted in redact mode). */
  release: string;
  /** Block mode: at most one, reported when the leak's last word completes; nothing after it is released. */
  leaks: LeakInfo[];
}

// Local aliases: a global lookup per call is slow where the global object is not the
// realm's own (jest's vm contexts), and these sit in the hot loops.
const { imul, min, max } = Math;

const REDACTED = '[REDACTED]';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NO_LEAKS: LeakInfo[] = [];
const INF = 0x3fffffff;
/**
 * Letters a letter-level match must run into a later word, which then goes on with other
 * letters, for its redaction to take them (else it stops at the previous word).
 */
const FRAGMENT = 12;
/** Letter symbols are UTF-16 units; the separators between secrets come after them. */
const UNITS = 0x10000;

/** Growable Int32 list (construction only). */
class IntList {
  data = new Int32Array(64);
  length = 0;

  push(value: number): number {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length] = value;
    return this.length++;
  }
}

function mix(state: number, sym: number): number {
  let h = imul(state, 0x9e3779b1) ^ imul(sym + 0x632be5ab, 0x85ebca77);
  h ^= h >>> 15;
  h = imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 13);
}

/** Open-addressing map (state, symbol) -> state. */
class TransitionTable {
  size = 0;
  private states: Int32Array;
  private syms: Int32Array;
  private targets: Int32Array;
  private mask: number;

  constructor(expected: number) {
    let capacity = 16;
    while (capacity < expected * 2) {
      capacity *= 2;
    }
    this.states = new Int32Array(capacity).fill(-1);
    this.syms = new Int32Array(capacity);
    this.targets = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  get(state: number, sym: number): number {
    const i = this.slot(state, sym);
    return this.states[i] === -1 ? -1 : this.targets[i];
  }

  /** Sets a transition; true when it is new. */
  set(state: number, sym: number, target: number): boolean {
    const i = this.slot(state, sym);
    this.targets[i] = target;
    if (this.states[i] !== -1) {
      return false;
    }
    this.states[i] = state;
    this.syms[i] = sym;
    this.size += 1;
    if (this.size * 3 > this.states.length * 2) {
      this.resize(this.states.length * 2);
    }
    return true;
  }

  get bytes(): number {
    return this.states.byteLength * 3;
  }

  /** Shrinks to a load of at most 3/4 once nothing more is added. */
  compact(): void {
    let capacity = 16;
    while (capacity * 3 < this.size * 4) {
      capacity *= 2;
    }
    if (capacity < this.states.length) {
      this.resize(capacity);
    }
  }

  private slot(state: number, sym: number): number {
    let i = mix(state, sym) & this.mask;
    for (;;) {
      const s = this.states[i];
      if (s === -1 || (s === state && this.syms[i] === sym)) {
        return i;
      }
      i = (i + 1) & this.mask;
    }
  }

  private resize(capacity: number): void {
    const { states, syms, targets } = this;
    this.states = new Int32Array(capacity).fill(-1);
    this.syms = new Int32Array(capacity);
    this.targets = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < states.length; i += 1) {
      if (states[i] !== -1) {
        const j = this.slot(states[i], syms[i]);
        this.states[j] = states[i];
        this.syms[j] = syms[i];
        this.targets[j] = targets[i];
      }
    }
  }
}

/**
 * Suffix automaton of the secrets' symbols (words or letters), each secret followed by a
 * separator symbol of its own so no match crosses two secrets. A string is *live* when it
 * begins a leak window of some secret: it occurs at a position p <= (secret length - window),
 * or is at least a window long. With `slack` of an occurrence ending at position e of its
 * secret = e + 1 - (secret length - window), a string of length k in state v is live iff
 * k >= minSlack[v] (the least slack over the state's end positions).
 */
class Automaton {
  readonly link: Int32Array;
  readonly len: Int32Array;
  readonly minSlack: Int32Array;
  readonly table: TransitionTable;
  /** Word level: per state, its transitions sorted by symbol and a min tree over their minSlack. */
  private rows: Int32Array | undefined;
  private rowSyms: Int32Array | undefined;
  private tree: Int32Array | undefined;
  /** Word level, secrets shorter than the window: lengths ending in each state, and above it. */
  private shortHere: Map<number, number[]> | undefined;
  private shortAbove: Int32Array | undefined;
  /** Transition lists of the construction, kept until `indexRanges` or `dropEdges`. */
  private edges: { head: Int32Array; sym: Int32Array; next: Int32Array; count: number } | undefined;

  constructor(syms: Int32Array, slack: Int32Array) {
    const n = syms.length;
    const link = new Int32Array(2 * n + 1);
    const len = new Int32Array(2 * n + 1);
    const minSlack = new Int32Array(2 * n + 1).fill(INF);
    const table = new TransitionTable(2 * n);
    const edgeHead = new Int32Array(2 * n + 1).fill(-1);
    const edgeSym = new IntList();
    const edgeNext = new IntList();
    const set = (state: number, sym: number, target: number): void => {
      if (table.set(state, sym, target)) {
        edgeSym.push(sym);
        edgeHead[state] = edgeNext.push(edgeHead[state]);
      }
    };
    link[0] = -1;
    let count = 1;
    let last = 0;
    for (let i = 0; i < n; i += 1) {
      const c = syms[i];
      const cur = count++;
      len[cur] = len[last] + 1;
      minSlack[cur] = slack[i];
      let p = last;
      while (p !== -1 && table.get(p, c) < 0) {
        set(p, c, cur);
        p = link[p];
      }
      if (p === -1) {
        link[cur] = 0;
      } else {
        const q = table.get(p, c);
        if (len[p] + 1 === len[q]) {
          link[cur] = q;
        } else {
          const clone = count++;
          len[clone] = len[p] + 1;
          link[clone] = link[q];
          for (let e = edgeHead[q]; e !== -1; e = edgeNext.data[e]) {
            const sym = edgeSym.data[e];
            set(clone, sym, table.get(q, sym));
          }
          while (p !== -1 && table.get(p, c) === q) {
            table.set(p, c, clone);
            p = link[p];
          }
          link[q] = clone;
          link[cur] = clone;
        }
      }
      last = cur;
    }
    table.compact();
    this.table = table;
    this.link = link.slice(0, count);
    this.len = len.slice(0, count);
    this.minSlack = minSlack.slice(0, count);
    // End positions of a state are those of its link-tree subtree: children are longer.
    for (const v of this.byLength().reverse()) {
      if (v !== 0) {
        const up = this.link[v];
        this.minSlack[up] = min(this.minSlack[up], this.minSlack[v]);
      }
    }
    this.edges = { head: edgeHead, sym: edgeSym.data, next: edgeNext.data, count: edgeSym.length };
  }

  get states(): number {
    return this.len.length;
  }

  /** Memory held, roughly, in bytes. */
  get bytes(): number {
    return (
      this.len.byteLength * 3 +
      this.table.bytes +
      (this.rows?.byteLength ?? 0) +
      (this.rowSyms?.byteLength ?? 0) +
      (this.tree?.byteLength ?? 0) +
      (this.shortAbove?.byteLength ?? 0)
    );
  }

  /** States by increasing length (a state's link comes before it). */
  byLength(): Int32Array {
    const { len } = this;
    let longest = 0;
    for (let v = 0; v < len.length; v += 1) {
      longest = max(longest, len[v]);
    }
    const starts = new Int32Array(longest + 2);
    for (let v = 0; v < len.length; v += 1) {
      starts[len[v] + 1] += 1;
    }
    for (let l = 1; l <= longest + 1; l += 1) {
      starts[l] += starts[l - 1];
    }
    const order = new Int32Array(len.length);
    for (let v = 0; v < len.length; v += 1) {
      order[starts[len[v]]++] = v;
    }
    return order;
  }

  dropEdges(): void {
    this.edges = undefined;
  }

  /** Prepares `minSlackIn`: per state, transitions sorted by symbol and a min tree. */
  indexRanges(): void {
    const edges = this.edges as NonNullable<Automaton['edges']>;
    this.edges = undefined;
    const states = this.states;
    const rows = new Int32Array(states + 1);
    const rowSyms = new Int32Array(edges.count);
    let at = 0;
    for (let v = 0; v < states; v += 1) {
      rows[v] = at;
      for (let e = edges.head[v]; e !== -1; e = edges.next[e]) {
        rowSyms[at++] = edges.sym[e];
      }
      rowSyms.subarray(rows[v], at).sort();
    }
    rows[states] = at;
    const tree = new Int32Array(2 * at);
    for (let v = 0; v < states; v += 1) {
      for (let i = rows[v]; i < rows[v + 1]; i += 1) {
        tree[at + i] = this.minSlack[this.table.get(v, rowSyms[i])];
      }
    }
    for (let i = at - 1; i > 0; i -= 1) {
      tree[i] = min(tree[2 * i], tree[2 * i + 1]);
    }
    this.rows = rows;
    this.rowSyms = rowSyms;
    this.tree = tree;
  }

  /** Least minSlack over the states `v` goes to on a symbol in [lo, hi]. */
  minSlackIn(v: number, lo: number, hi: number): number {
    const rows = this.rows as Int32Array;
    const rowSyms = this.rowSyms as Int32Array;
    const tree = this.tree as Int32Array;
    const end = rows[v + 1];
    let l = lowerBound(rowSyms, rows[v], end, lo);
    let r = lowerBound(rowSyms, l, end, hi + 1);
    let best = INF;
    const size = rowSyms.length;
    for (l += size, r += size; l < r; l >>= 1, r >>= 1) {
      if (l & 1) {
        best = min(best, tree[l++]);
      }
      if (r & 1) {
        best = min(best, tree[--r]);
      }
    }
    return best;
  }

  /** Registers whole secrets shorter than the window (`lengths` of them, by their symbols). */
  indexShort(secrets: readonly Int32Array[]): void {
    const here = new Map<number, number[]>();
    for (const secret of secrets) {
      let v = 0;
      for (const sym of secret) {
        v = this.table.get(v, sym);
      }
      // Distinct lengths only: many copies of one short secret (or spellings that fold to
      // the same words) end in the same state, and would make this and shortLeak quadratic.
      // At most `need` distinct lengths end in one state.
      const lengths = here.get(v);
      if (lengths === undefined) {
        here.set(v, [secret.length]);
      } else if (!lengths.includes(secret.length)) {
        lengths.push(secret.length);
      }
    }
    const above = new Int32Array(this.states);
    for (const v of this.byLength()) {
      if (v !== 0) {
        const up = this.link[v];
        let best = above[up];
        for (const length of here.get(up) ?? []) {
          best = max(best, length);
        }
        above[v] = best;
      }
    }
    this.shortHere = here;
    this.shortAbove = above;
  }

  /** The longest short secret that ends the string of length `k` in state `v`, else 0. */
  shortLeak(v: number, k: number): number {
    if (this.shortAbove === undefined) {
      return 0;
    }
    let best = this.shortAbove[v];
    for (const length of this.shortHere?.get(v) ?? []) {
      if (length <= k && length > best) {
        best = length;
      }
    }
    return best;
  }
}

function lowerBound(a: Int32Array, from: number, to: number, value: number): number {
  while (from < to) {
    const mid = (from + to) >>> 1;
    if (a[mid] < value) {
      from = mid + 1;
    } else {
      to = mid;
    }
  }
  return from;
}

/** The secrets of one request, compiled once and shared by every matcher of the request. */
export interface CompiledSecrets {
  /** No secret has a word: nothing can leak. */
  readonly empty: boolean;
  /** Folded secret words, sorted: a word's id is its index, so a prefix is an id range. */
  readonly vocab: readonly string[];
  readonly words: Automaton;
  /** Words in a leak of a secret at least that long (min_overlap). */
  readonly need: number;
  /** Letter level, when some secret has at least `letterNeed` letters. */
  readonly letters: Automaton | undefined;
  readonly letterNeed: number;
}

/** Compiled secrets are cached: the same system prompt comes with every request of an app. */
const CACHE_ENTRIES = 64;
/** Bound on the cache's memory (about 60 bytes per character of secret); a quarter per entry. */
const CACHE_BYTES = 48 << 20;
const cache = new Map<string, { compiled: CompiledSecrets; weight: number }>();
let cacheWeight = 0;

/** Folds the secrets and builds their automata (linear in their length), or reuses them. */
export function compileSecrets(secrets: readonly string[], minOverlap: number): CompiledSecrets {
  const key = JSON.stringify([minOverlap, secrets]);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.compiled;
  }
  const compiled = compile(secrets, minOverlap);
  const weight = key.length * 4 + compiled.words.bytes + (compiled.letters?.bytes ?? 0);
  if (weight * 4 <= CACHE_BYTES) {
    cache.set(key, { compiled, weight });
    cacheWeight += weight;
    for (const [old, entry] of cache) {
      if (cache.size <= CACHE_ENTRIES && cacheWeight <= CACHE_BYTES) {
        break;
      }
      cache.delete(old);
      cacheWeight -= entry.weight;
    }
  }
  return compiled;
}

function compile(secrets: readonly string[], minOverlap: number): CompiledSecrets {
  const need = max(1, minOverlap);
  const letterNeed = max(6 * need, 40);
  const split = secrets.map((s) => toWords(s)).filter((w) => w.length > 0);
  const vocab = [...new Set(split.flat())].sort();
  const ids = new Map(vocab.map((word, id) => [word, id]));

  const total = split.reduce((sum, w) => sum + w.length + 1, 0);
  const syms = new Int32Array(total);
  const slack = new Int32Array(total);
  const short: Int32Array[] = [];
  let at = 0;
  split.forEach((words, s) => {
    const window = min(need, words.length);
    const from = at;
    words.forEach((word, p) => {
      syms[at] = ids.get(word) as number;
      slack[at++] = p + 1 - (words.length - window);
    });
    if (words.length < need) {
      short.push(syms.slice(from, at));
    }
    syms[at] = vocab.length + s;
    slack[at++] = INF;
  });
  const words = new Automaton(syms, slack);
  words.indexRanges();
  if (short.length > 0) {
    words.indexShort(short);
  }

  const texts = split.map((w) => w.join('')).filter((t) => t.length >= letterNeed);
  let letters: Automaton | undefined;
  if (texts.length > 0) {
    const size = texts.reduce((sum, t) => sum + t.length + 1, 0);
    const units = new Int32Array(size);
    const unitSlack = new Int32Array(size);
    let i = 0;
    texts.forEach((text, s) => {
      for (let p = 0; p < text.length; p += 1) {
        units[i] = text.charCodeAt(p);
        unitSlack[i++] = p + 1 - (text.length - letterNeed);
      }
      units[i] = UNITS + s;
      unitSlack[i++] = INF;
    });
    letters = new Automaton(units, unitSlack);
    letters.dropEdges();
  }
  return { empty: vocab.length === 0, vocab, words, need, letters, letterNeed };
}

/**
 * The head of one check: the earliest anchor (output position a leak may start at) from
 * which the output so far is live, with the automaton state of that string. Anchors behind
 * the head are only looked at when it dies; each is dropped once, so the work is amortized
 * O(1) automaton steps per symbol.
 */
class Tracker {
  live = false;
  /** State and length of the head's string (it ends at `position`). */
  state = 0;
  length = 0;
  /** Symbols fed so far. */
  position = 0;
  private readonly pos: number[] = [];
  private readonly raw: number[] = [];
  private readonly word: number[] = [];
  private readonly inString: boolean[] = [];
  private head = 0;

  constructor(private readonly automaton: Automaton) {}

  /** A leak may start at the next symbol, which begins the word at raw offset `raw`. */
  anchor(raw: number, word: number, inString: boolean): void {
    if (!this.live) {
      this.live = true;
      this.state = 0;
      this.length = 0;
    } else if (this.head > 256 && this.head * 2 > this.pos.length) {
      for (const list of [this.pos, this.raw, this.word, this.inString]) {
        list.splice(0, this.head);
      }
      this.head = 0;
    }
    this.pos.push(this.position);
    this.raw.push(raw);
    this.word.push(word);
    this.inString.push(inString);
  }

  /** Appends a symbol (-1: one no secret has). */
  feed(sym: number): void {
    if (this.live) {
      const { table, minSlack } = this.automaton;
      let v = this.state;
      for (;;) {
        const t = sym < 0 ? -1 : table.get(v, sym);
        if (t >= 0 && minSlack[t] <= this.length + 1) {
          this.state = t;
          this.length += 1;
          break;
        }
        v = this.advance(v);
        if (v < 0) {
          break;
        }
      }
    }
    this.position += 1;
  }

  /** Drops the head while no symbol in [lo, hi] (an unfinished word's ids) can extend it. */
  constrain(lo: number, hi: number): void {
    let v = this.state;
    while (this.live && !(lo <= hi && this.automaton.minSlackIn(v, lo, hi) <= this.length + 1)) {
      v = this.advance(v);
    }
    if (this.live) {
      this.state = v;
    }
  }

  /** Index of the anchor at `position` (at or after the head). */
  anchorAt(position: number): number {
    let lo = this.head;
    let hi = this.pos.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.pos[mid] < position) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  get headIndex(): number {
    return this.head;
  }

  rawAt(i: number): number {
    return this.raw[i];
  }

  wordAt(i: number): number {
    return this.word[i];
  }

  inStringAt(i: number): boolean {
    return this.inString[i];
  }

  /**
   * Moves the head to the next anchor: its string is a suffix of the head's (state `v`),
   * found up the suffix links. Returns its state, or -1 when no anchor is left.
   */
  private advance(v: number): number {
    this.head += 1;
    if (this.head >= this.pos.length) {
      this.live = false;
      this.head = 0;
      for (const list of [this.pos, this.raw, this.word, this.inString]) {
        list.length = 0;
      }
      return -1;
    }
    const k = this.position - this.pos[this.head];
    const { link, len } = this.automaton;
    while (v !== 0 && len[link[v]] >= k) {
      v = link[v];
    }
    this.length = k;
    return v;
  }
}

/** Output known to be leaked (redact mode), waiting until nothing live overlaps it. */
interface Run {
  startWord: number;
  endWord: number;
  startRaw: number;
  endRaw: number;
  startInString: boolean;
}

/**
 * Matches one channel of output against the secrets as it streams. `text` takes plain text;
 * `json` takes raw JSON fragments (tool-call arguments) and matches the decoded string
 * contents, while releasing and redacting the raw JSON. One instance per block; not reusable.
 */
export class LeakMatcher {
  // Raw text not released yet, as a queue of chunks; offsets are absolute.
  private readonly held: string[] = [];
  private heldHead = 0;
  private headCut = 0;
  private heldStart = 0;
  private rawEnd = 0;

  // JSON decoding: 0 = none, 1 = after a backslash, 2 = in \uXXXX.
  private inString = false;
  private escape = 0;
  private escapeStart = 0;
  private hex = 0;
  private hexDigits = 0;
  private high = -1;
  private highStart = 0;

  private readonly splitter = new WordSplitter();
  /** Index of the current (or last) word. */
  private wordIndex = -1;
  private wordEnd = 0;
  private lastWordEnd = 0;
  /** Folded UTF-16 units of the unfinished word. */
  private wordLength = 0;
  /** Ids of the secret words the unfinished word is a prefix of (empty when lo > hi). */
  private lo = 0;
  private hi = -1;

  private readonly words: Tracker;
  private readonly letters: Tracker | undefined;
  private readonly runs: Run[] = [];
  private blockLeak: { startRaw: number; words: number } | undefined;
  private stopped = false;

  constructor(
    private readonly secrets: CompiledSecrets,
    private readonly channel: LeakChannelKind,
    private readonly mode: FilterAction,
  ) {
    this.words = new Tracker(secrets.words);
    this.letters = secrets.letters && new Tracker(secrets.letters);
  }

  /** Feeds a chunk; returns what can be released now. */
  push(chunk: string): MatchResult {
    if (this.stopped || chunk === '') {
      return { release: '', leaks: NO_LEAKS };
    }
    const base = this.rawEnd;
    this.held.push(chunk);
    this.rawEnd += chunk.length;
    for (let i = 0; i < chunk.length && this.blockLeak === undefined; i += 1) {
      this.raw(chunk.charCodeAt(i), base + i);
    }
    return this.settle(false);
  }

  /** Ends the stream: completes the last word and releases everything that is left. */
  end(): MatchResult {
    if (this.stopped) {
      return { release: '', leaks: NO_LEAKS };
    }
    if (this.escape !== 0) {
      // A truncated escape is no character: treat it as a separator.
      this.escape = 0;
      this.unit(0x20, this.escapeStart, this.rawEnd);
    }
    this.flushHigh();
    if (this.splitter.inWord && this.blockLeak === undefined) {
      this.splitter.inWord = false;
      this.completeWord();
    }
    const result = this.settle(true);
    this.stopped = true;
    return result;
  }

  private raw(code: number, offset: number): void {
    if (this.channel === 'text') {
      this.unit(code, offset, offset + 1);
      return;
    }
    if (!this.inString) {
      this.unit(code, offset, offset + 1);
      this.inString = code === QUOTE;
      return;
    }
    if (this.escape === 0) {
      if (code === BACKSLASH) {
        this.escape = 1;
        this.escapeStart = offset;
        return;
      }
      this.unit(code, offset, offset + 1);
      this.inString = code !== QUOTE;
      return;
    }
    if (this.escape === 1) {
      if (code === 0x75 /* u */) {
        this.escape = 2;
        this.hex = 0;
        this.hexDigits = 0;
        return;
      }
      this.escape = 0;
      this.unit(ESCAPES.get(code) ?? code, this.escapeStart, offset + 1);
      return;
    }
    const digit = hexValue(code);
    if (digit < 0) {
      // Not valid JSON: count the broken escape as a separator and read this unit again.
      this.escape = 0;
      this.unit(0x20, this.escapeStart, offset);
      this.raw(code, offset);
      return;
    }
    this.hex = this.hex * 16 + digit;
    this.hexDigits += 1;
    if (this.hexDigits === 4) {
      this.escape = 0;
      this.unit(this.hex, this.escapeStart, offset + 1);
    }
  }

  /** One UTF-16 unit of logical text; pairs surrogates across chunks and escapes. */
  private unit(code: number, start: number, end: number): void {
    if (this.high >= 0) {
      if (code >= 0xdc00 && code <= 0xdfff) {
        const cp = (this.high - 0xd800) * 0x400 + (code - 0xdc00) + 0x10000;
        this.high = -1;
        this.codePoint(cp, this.highStart, end);
        return;
      }
      this.flushHigh();
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      this.high = code;
      this.highStart = start;
      return;
    }
    this.codePoint(code, start, end);
  }

  private flushHigh(): void {
    if (this.high >= 0) {
      const high = this.high;
      this.high = -1;
      this.codePoint(high, this.highStart, this.highStart + 1);
    }
  }

  private codePoint(cp: number, start: number, end: number): void {
    const fold = foldCodePoint(cp);
    const { ends, starts } = this.splitter.step(fold);
    if (ends) {
      this.completeWord();
    }
    if (starts) {
      this.startWord(start);
    }
    const { text } = fold;
    if (text === '') {
      return;
    }
    this.wordEnd = end;
    const letters = this.letters;
    for (let i = 0; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (this.lo <= this.hi) {
        this.narrow(c);
      }
      this.wordLength += 1;
      if (letters !== undefined) {
        letters.feed(c);
        if (letters.live && letters.length >= this.secrets.letterNeed) {
          this.letterLeak(end);
        }
      }
    }
  }

  /**
   * The letters from the head up to here leak. The run ends here, or at the end of the
   * previous word while the match runs fewer than FRAGMENT letters into this one: "Answer|ing"
   * after a leak that the secret goes on with "answer politely" keeps its word. Completing
   * a word the match still covers extends the run over it.
   */
  private letterLeak(end: number): void {
    const letters = this.letters as Tracker;
    const h = letters.headIndex;
    const first = letters.wordAt(h);
    if (first === this.wordIndex || this.wordLength >= FRAGMENT) {
      this.leak(h, letters, end, this.wordIndex, this.wordIndex - first + 1);
    } else {
      this.leak(h, letters, this.lastWordEnd, this.wordIndex - 1, this.wordIndex - first);
    }
  }

  private startWord(start: number): void {
    this.wordIndex += 1;
    this.wordLength = 0;
    this.lo = 0;
    this.hi = this.secrets.vocab.length - 1;
    this.words.anchor(start, this.wordIndex, this.inString);
    this.letters?.anchor(start, this.wordIndex, this.inString);
  }

  /** Keeps the ids of the words whose unit at `wordLength` is `c` (they are sorted). */
  private narrow(c: number): void {
    const { vocab } = this.secrets;
    const at = this.wordLength;
    const unitOf = (id: number): number => (at < vocab[id].length ? vocab[id].charCodeAt(at) : -1);
    let lo = this.lo;
    let hi = this.hi + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (unitOf(mid) < c) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    let end = lo;
    hi = this.hi + 1;
    while (end < hi) {
      const mid = (end + hi) >>> 1;
      if (unitOf(mid) <= c) {
        end = mid + 1;
      } else {
        hi = mid;
      }
    }
    this.lo = lo;
    this.hi = end - 1;
  }

  private completeWord(): void {
    const { vocab, need } = this.secrets;
    const id = this.lo <= this.hi && vocab[this.lo].length === this.wordLength ? this.lo : -1;
    this.lo = 0;
    this.hi = -1;
    this.lastWordEnd = this.wordEnd;
    const { words, letters } = this;
    if (letters?.live && letters.length >= this.secrets.letterNeed) {
      this.letterLeak(this.wordEnd);
    }
    words.feed(id);
    if (!words.live) {
      return;
    }
    const leaked =
      words.length >= need ? words.length : this.secrets.words.shortLeak(words.state, words.length);
    if (leaked > 0) {
      const i = words.anchorAt(words.position - leaked);
      this.leak(i, words, this.wordEnd, this.wordIndex, leaked);
    }
  }

  /** A leak from anchor `i` of `tracker` to raw offset `endRaw`, in word `endWord`. */
  private leak(i: number, tracker: Tracker, endRaw: number, endWord: number, words: number): void {
    const startRaw = tracker.rawAt(i);
    if (this.mode === 'block') {
      if (this.blockLeak === undefined || startRaw < this.blockLeak.startRaw) {
        this.blockLeak = { startRaw, words };
      }
      return;
    }
    // Redact the union of all leaked windows: merge with the runs this one overlaps.
    const run: Run = {
      startWord: tracker.wordAt(i),
      endWord,
      startRaw,
      endRaw,
      startInString: tracker.inStringAt(i),
    };
    let last = this.runs.at(-1);
    while (last !== undefined && last.endRaw > run.startRaw) {
      this.runs.pop();
      if (last.startRaw < run.startRaw) {
        run.startWord = last.startWord;
        run.startRaw = last.startRaw;
        run.startInString = last.startInString;
      }
      run.endRaw = max(run.endRaw, last.endRaw);
      run.endWord = max(run.endWord, last.endWord);
      last = this.runs.at(-1);
    }
    this.runs.push(run);
  }

  private settle(final: boolean): MatchResult {
    if (this.blockLeak !== undefined) {
      const release = this.take(this.blockLeak.startRaw);
      const leaks = [{ words: this.blockLeak.words }];
      this.stopped = true;
      this.held.length = 0;
      return { release, leaks };
    }
    let release = '';
    let leaks = NO_LEAKS;
    // Where the earliest text that may still become part of a leak starts.
    let live = this.rawEnd;
    if (!final) {
      if (this.splitter.inWord) {
        this.words.constrain(this.lo, this.hi);
      }
      for (const tracker of [this.words, this.letters]) {
        if (tracker?.live) {
          live = min(live, tracker.rawAt(tracker.headIndex));
        }
      }
    }
    // A run is final once nothing live could still reach into it.
    while (this.runs.length > 0 && (final || this.runs[0].endRaw <= live)) {
      const run = this.runs.shift() as Run;
      release += this.take(run.startRaw);
      release += this.redact(this.take(run.endRaw), run.startInString);
      leaks = leaks === NO_LEAKS ? [] : leaks;
      leaks.push({ words: run.endWord - run.startWord + 1 });
    }
    let hold = live;
    if (!final) {
      if (this.runs.length > 0) {
        hold = min(hold, this.runs[0].startRaw);
      }
      if (this.escape !== 0) {
        hold = min(hold, this.escapeStart);
      }
      if (this.high >= 0) {
        hold = min(hold, this.highStart);
      }
    }
    release += this.take(hold);
    return { release, leaks };
  }

  /** Removes and returns the held raw text before absolute offset `until`. */
  private take(until: number): string {
    let out = '';
    while (this.heldStart < until) {
      const chunk = this.held[this.heldHead];
      const available = chunk.length - this.headCut;
      const wanted = until - this.heldStart;
      if (wanted >= available) {
        out += this.headCut === 0 ? chunk : chunk.slice(this.headCut);
        this.heldStart += available;
        this.heldHead += 1;
        this.headCut = 0;
      } else {
        out += chunk.slice(this.headCut, this.headCut + wanted);
        this.heldStart += wanted;
        this.headCut += wanted;
      }
    }
    if (this.heldHead > 64 && this.heldHead * 2 > this.held.length) {
      this.held.splice(0, this.heldHead);
      this.heldHead = 0;
    }
    return out;
  }

  /**
   * The replacement of a leaked raw span. In JSON only string contents go: quotes and
   * everything outside strings stay, and each string piece becomes `[REDACTED]`, so the
   * arguments still parse.
   */
  private redact(span: string, inString: boolean): string {
    if (this.channel === 'text') {
      return REDACTED;
    }
    let out = '';
    let escaped = false;
    let inContent = false;
    for (const ch of span) {
      if (inString && (escaped || ch !== '"')) {
        escaped = !escaped && ch === '\\';
        if (!inContent) {
          out += REDACTED;
          inContent = true;
        }
        continue;
      }
      out += ch;
      inContent = false;
      if (ch === '"') {
        inString = !inString;
      }
    }
    return out;
  }
}

const ESCAPES = new Map<number, number>([
  [0x6e /* n */, 0x0a],
  [0x74 /* t */, 0x09],
  [0x72 /* r */, 0x0d],
  [0x62 /* b */, 0x08],
  [0x66 /* f */, 0x0c],
]);

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) {
    return code - 0x30;
  }
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}
