/** The head tracker of one check of the leak matcher (see leak-matcher.ts). */
import { Automaton } from './leak-automaton';

/**
 * The head of one check: the earliest anchor (output position a leak may start at) from
 * which the output so far is live, with the automaton state of that string. Anchors behind
 * the head are only looked at when it dies; each is dropped once, so the work is amortized
 * O(1) automaton steps per symbol.
 */
export class Tracker {
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
