import type { FilterAction } from './settings';
import { foldCodePoint, WordSplitter } from './words';
import { type CompiledSecrets } from './compiled-secrets';
import { Tracker } from './leak-tracker';

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
const { min, max } = Math;

const REDACTED = '[REDACTED]';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NO_LEAKS: LeakInfo[] = [];
/**
 * Letters a letter-level match must run into a later word, which then goes on with other
 * letters, for its redaction to take them (else it stops at the previous word).
 */
const FRAGMENT = 12;
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
