import type { FilterAction } from './settings';
import { foldCodePoint, toWords } from './words';

/**
 * Streaming leak matcher over one channel of model output.
 *
 * Text and secrets are folded to words (see words.ts). A leak is `need` consecutive output
 * words equal to `need` consecutive words of a secret, where `need` = min(minOverlap, the
 * secret's word count). Each secret position a leak could start at is indexed by its word,
 * so an output word only touches the alignments that are live and the positions of that
 * word. An alignment is dropped as soon as the unfinished output word stops being a prefix
 * of the word it expects, so the held tail is exactly the text that could still complete
 * a leak: the earliest live alignment, a pending redaction, the unfinished word when it is
 * a prefix of a word a leak can start with, or an incomplete escape / surrogate pair.
 * Work per chunk is proportional to the chunk times the live alignments; nothing is rescanned.
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

interface TrieNode {
  next: Map<number, TrieNode> | undefined;
  /** Word id when a secret word ends here, else -1. */
  id: number;
  /** Some word a leak can start with has this prefix. */
  startable: boolean;
}

/** The secrets of one request, compiled once and shared by every matcher of the request. */
export interface CompiledSecrets {
  /** Word ids of all secrets, one after the other. */
  readonly ids: Int32Array;
  /** Per position: the end (exclusive) of its secret. */
  readonly ends: Int32Array;
  /** Per position: words that make a leak of its secret. */
  readonly need: Int32Array;
  /** Word id -> folded word. */
  readonly words: readonly string[];
  /** Word id -> positions a leak can start at with that word. */
  readonly starts: readonly (number[] | undefined)[];
  readonly trie: TrieNode;
  /** No secret has a word: nothing can leak. */
  readonly empty: boolean;
}

const REDACTED = '[REDACTED]';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NO_LEAKS: LeakInfo[] = [];

/** Folds the secrets to words and indexes where a leak can start. Linear in their length. */
export function compileSecrets(secrets: readonly string[], minOverlap: number): CompiledSecrets {
  const vocab = new Map<string, number>();
  const words: string[] = [];
  const ids: number[] = [];
  const ends: number[] = [];
  const need: number[] = [];
  const starts: (number[] | undefined)[] = [];
  const trie: TrieNode = { next: undefined, id: -1, startable: false };
  const idOf = (word: string): number => {
    let id = vocab.get(word);
    if (id === undefined) {
      id = words.length;
      vocab.set(word, id);
      words.push(word);
      starts.push(undefined);
      insert(trie, word, id);
    }
    return id;
  };
  for (const secret of secrets) {
    const secretWords = toWords(secret);
    if (secretWords.length === 0) {
      continue;
    }
    const offset = ids.length;
    const end = offset + secretWords.length;
    const n = Math.max(1, Math.min(minOverlap, secretWords.length));
    secretWords.forEach((word, p) => {
      const id = idOf(word);
      ids.push(id);
      ends.push(end);
      need.push(n);
      // A leak needs n words from here on, so later positions cannot start one.
      if (p <= secretWords.length - n) {
        (starts[id] ??= []).push(offset + p);
      }
    });
  }
  words.forEach((word, id) => {
    if (starts[id] !== undefined) {
      markStartable(trie, word);
    }
  });
  return {
    ids: Int32Array.from(ids),
    ends: Int32Array.from(ends),
    need: Int32Array.from(need),
    words,
    starts,
    trie,
    empty: ids.length === 0,
  };
}

function insert(root: TrieNode, word: string, id: number): void {
  let node = root;
  for (let i = 0; i < word.length; i += 1) {
    const c = word.charCodeAt(i);
    node.next ??= new Map();
    let child = node.next.get(c);
    if (child === undefined) {
      child = { next: undefined, id: -1, startable: false };
      node.next.set(c, child);
    }
    node = child;
  }
  node.id = id;
}

function markStartable(root: TrieNode, word: string): void {
  let node: TrieNode | undefined = root;
  for (let i = 0; node !== undefined && i <= word.length; i += 1) {
    node.startable = true;
    node = i < word.length ? node.next?.get(word.charCodeAt(i)) : undefined;
  }
}

interface Alignment {
  /** Position of the secret word expected next. */
  next: number;
  end: number;
  need: number;
  /** Output words matched so far. */
  len: number;
  startWord: number;
  startRaw: number;
  startInString: boolean;
}

/** Output words known to be leaked (redact mode), waiting until nothing live overlaps them. */
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

  private inWord = false;
  private wordStart = 0;
  private wordEnd = 0;
  private wordInString = false;
  private wordLength = 0;
  /** Trie node of the unfinished word; undefined once it is no secret word's prefix. */
  private node: TrieNode | undefined;
  private wordIndex = 0;

  private alignments: Alignment[] = [];
  /** Per secret position: the output word at which an alignment last came to expect it. */
  private stamps: Int32Array | undefined;
  private readonly runs: Run[] = [];
  private blockLeak: { startRaw: number; words: number } | undefined;
  private stopped = false;

  constructor(
    private readonly secrets: CompiledSecrets,
    private readonly channel: LeakChannelKind,
    private readonly mode: FilterAction,
  ) {}

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
    if (this.inWord) {
      this.completeWord();
    }
    this.alignments = [];
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
    const folded = foldCodePoint(cp);
    if (folded === null) {
      if (this.inWord) {
        this.completeWord();
      }
      return;
    }
    if (folded === '') {
      return;
    }
    if (!this.inWord) {
      this.inWord = true;
      this.wordStart = start;
      this.wordInString = this.inString;
      this.wordLength = 0;
      this.node = this.secrets.trie;
    }
    this.wordEnd = end;
    for (let i = 0; i < folded.length && this.node !== undefined; i += 1) {
      const c = folded.charCodeAt(i);
      this.node = this.node.next?.get(c);
      if (this.node === undefined) {
        // No secret word starts like this one: every alignment dies with it.
        this.alignments = [];
      } else if (this.alignments.length > 0) {
        this.keepAlignments(this.wordLength, c);
      }
      this.wordLength += 1;
    }
  }

  /** Drops the alignments whose expected word does not have `c` at `at`. */
  private keepAlignments(at: number, c: number): void {
    const { ids, words } = this.secrets;
    let kept = 0;
    for (const a of this.alignments) {
      if (words[ids[a.next]].charCodeAt(at) === c) {
        this.alignments[kept++] = a;
      }
    }
    this.alignments.length = kept;
  }

  private completeWord(): void {
    this.inWord = false;
    const id = this.node?.id ?? -1;
    this.node = undefined;
    this.wordIndex += 1;
    const w = this.wordIndex;
    const { ids, ends, need, starts } = this.secrets;
    if (id < 0) {
      this.alignments = [];
      return;
    }
    const stamps = (this.stamps ??= new Int32Array(ids.length + 1));
    let kept = 0;
    for (const a of this.alignments) {
      if (ids[a.next] !== id) {
        continue;
      }
      a.next += 1;
      a.len += 1;
      stamps[a.next] = w;
      if (a.len >= a.need) {
        this.hit(a);
      }
      if (a.next < a.end) {
        this.alignments[kept++] = a;
      }
    }
    this.alignments.length = kept;
    for (const p of starts[id] ?? []) {
      // An older alignment already expecting p + 1 covers everything this one could.
      if (stamps[p + 1] === w) {
        continue;
      }
      stamps[p + 1] = w;
      const a: Alignment = {
        next: p + 1,
        end: ends[p],
        need: need[p],
        len: 1,
        startWord: w,
        startRaw: this.wordStart,
        startInString: this.wordInString,
      };
      if (a.len >= a.need) {
        this.hit(a);
      }
      if (a.next < a.end) {
        this.alignments.push(a);
      }
    }
  }

  private hit(a: Alignment): void {
    if (this.mode === 'block') {
      if (this.blockLeak === undefined || a.startRaw < this.blockLeak.startRaw) {
        this.blockLeak = { startRaw: a.startRaw, words: a.len };
      }
      return;
    }
    // Redact the union of all leaked windows: merge with the runs this one overlaps.
    const run: Run = {
      startWord: a.startWord,
      endWord: this.wordIndex,
      startRaw: a.startRaw,
      endRaw: this.wordEnd,
      startInString: a.startInString,
    };
    let last = this.runs.at(-1);
    while (last !== undefined && last.endWord >= run.startWord) {
      this.runs.pop();
      if (last.startWord < run.startWord) {
        run.startWord = last.startWord;
        run.startRaw = last.startRaw;
        run.startInString = last.startInString;
      }
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
    let firstLive = Infinity;
    let hold = this.rawEnd;
    for (const a of this.alignments) {
      firstLive = Math.min(firstLive, a.startWord);
      hold = Math.min(hold, a.startRaw);
    }
    // A run is final once no live alignment could still reach into it.
    while (this.runs.length > 0 && (final || this.runs[0].endWord < firstLive)) {
      const run = this.runs.shift() as Run;
      release += this.take(run.startRaw);
      release += this.redact(this.take(run.endRaw), run.startInString);
      leaks = leaks === NO_LEAKS ? [] : leaks;
      leaks.push({ words: run.endWord - run.startWord + 1 });
    }
    if (!final) {
      if (this.runs.length > 0) {
        hold = Math.min(hold, this.runs[0].startRaw);
      }
      if (this.inWord && this.node?.startable) {
        hold = Math.min(hold, this.wordStart);
      }
      if (this.escape !== 0) {
        hold = Math.min(hold, this.escapeStart);
      }
      if (this.high >= 0) {
        hold = Math.min(hold, this.highStart);
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
