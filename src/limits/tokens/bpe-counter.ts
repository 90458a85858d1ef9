import type { RankTable } from './rank-table';

/**
 * Counts the tokens a tiktoken encoding produces for a text, without building the token
 * list. It reads js-tiktoken's rank tables and split pattern and gives the same counts as
 * `Tiktoken.encode(text, [], []).length` (the spec checks this on several corpora), but:
 *
 * - merges are O(n²) per piece over the piece's UTF-8 bytes, looked up in place in a
 *   compact {@link RankTable}, instead of O(n³) with `join(',')` keys, so an unspaced CJK
 *   sentence costs microseconds instead of tens of milliseconds;
 * - counts of short pieces (words) are cached, so a warm count is mostly the regex split;
 * - a piece longer than {@link MAX_PIECE_BYTES} (a run of one character, base64 without
 *   case changes, unspaced CJK paragraphs) is counted in chunks of that size. Merges across
 *   a chunk edge are lost, so such text may count a few tokens high: bounded cost instead
 *   of a quadratic blow-up an attacker could trigger with one long word.
 *
 * Special-token text such as `<|endoftext|>` is counted as ordinary text.
 */
export const MAX_PIECE_BYTES = 128;
const CACHEABLE_PIECE_CHARS = 48;
const CACHE_LIMIT = 50_000;
/** Whole texts at least this long are remembered (system prompts, tool schemas, history). */
const CACHEABLE_TEXT_CHARS = 256;
/** Characters of remembered texts kept at most (~8 MB); the oldest go first. */
const TEXT_CACHE_CHARS = 4_000_000;

/** Largest piece buffer kept between counts (3 bytes per UTF-16 unit at most). */
const SCRATCH_KEPT_BYTES = 64 * 1024;
/** Rank of a pair that is not a token: larger than any rank, so never the best merge. */
const NOT_A_TOKEN = 0x7fffffff;

export class BpeCounter {
  private readonly table: RankTable;
  private readonly pattern: RegExp;
  private readonly cache = new Map<string, number>();
  private readonly texts = new Map<string, number>();
  private textChars = 0;
  /** Pieces' UTF-8 bytes, reused; grows up to SCRATCH_KEPT_BYTES. */
  private scratch = new Uint8Array(256);
  /** The bytes of the piece being counted: the scratch, or a buffer of its own if longer. */
  private bytes = this.scratch;
  // Merge state of one chunk: part i spans bounds[i]..bounds[i + 1] of the scratch bytes;
  // pairRank[i] is the rank of parts i and i + 1 merged.
  private readonly bounds = new Int32Array(MAX_PIECE_BYTES + 1);
  private readonly pairRank = new Int32Array(MAX_PIECE_BYTES);

  /** `patStr`: the encoding's split pattern (js-tiktoken's `pat_str`); `table`: its ranks. */
  constructor(patStr: string, table: RankTable) {
    this.pattern = new RegExp(patStr, 'gu');
    this.table = table;
  }

  /**
   * Number of tokens in `text`. Long texts are remembered: clients resend the same system
   * prompt, tool schemas and conversation history with every turn, and looking a text up
   * costs a hash of it, far less than splitting it again.
   */
  count(text: string): number {
    if (text.length < CACHEABLE_TEXT_CHARS || text.length > TEXT_CACHE_CHARS / 16) {
      return this.countUncached(text);
    }
    const known = this.texts.get(text);
    if (known !== undefined) {
      // Move it to the young end: hot texts (system prompts) are never the oldest.
      this.texts.delete(text);
      this.texts.set(text, known);
      return known;
    }
    const n = this.countUncached(text);
    this.texts.set(text, n);
    this.textChars += text.length;
    for (const [old] of this.texts) {
      if (this.textChars <= TEXT_CACHE_CHARS) {
        break;
      }
      this.texts.delete(old);
      this.textChars -= old.length;
    }
    return n;
  }

  private countUncached(text: string): number {
    let total = 0;
    this.pattern.lastIndex = 0;
    for (const match of text.matchAll(this.pattern)) {
      total += this.countPiece(match[0]);
    }
    return total;
  }

  private countPiece(piece: string): number {
    const cached = this.cache.get(piece);
    if (cached !== undefined) {
      return cached;
    }
    const length = this.encode(piece);
    let n = 0;
    for (let start = 0; start < length; start += MAX_PIECE_BYTES) {
      n += this.merge(start, Math.min(start + MAX_PIECE_BYTES, length));
    }
    if (piece.length <= CACHEABLE_PIECE_CHARS) {
      if (this.cache.size >= CACHE_LIMIT) {
        this.cache.clear();
      }
      this.cache.set(piece, n);
    }
    return n;
  }

  /** Writes the UTF-8 bytes of `piece` to {@link bytes}; returns their number. */
  private encode(piece: string): number {
    const needed = piece.length * 3;
    if (needed > SCRATCH_KEPT_BYTES) {
      // A run of letters can be megabytes long: its buffer goes when the count is done.
      this.bytes = new Uint8Array(needed);
    } else {
      if (this.scratch.length < needed) {
        this.scratch = new Uint8Array(needed);
      }
      this.bytes = this.scratch;
    }
    const out = this.bytes;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (c > 0x7f) {
        return UTF8.encodeInto(piece, out).written;
      }
      out[i] = c;
    }
    return piece.length;
  }

  /** Byte-pair merge of the piece's bytes start..end; returns the token count. */
  private merge(start: number, end: number): number {
    const len = end - start;
    const bytes = this.bytes;
    if (len <= 1 || this.table.rank(bytes, start, end) >= 0) {
      return Math.min(len, 1);
    }
    const { bounds, pairRank } = this;
    for (let i = 0; i <= len; i++) {
      bounds[i] = start + i;
    }
    for (let i = 0; i < len - 1; i++) {
      pairRank[i] = this.rankOf(start + i, start + i + 2);
    }
    let parts = len;
    while (parts > 1) {
      let best = NOT_A_TOKEN;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (pairRank[i] < best) {
          best = pairRank[i];
          at = i;
        }
      }
      if (at < 0) {
        break;
      }
      bounds.copyWithin(at + 1, at + 2, parts + 1);
      pairRank.copyWithin(at, at + 1, parts - 1);
      parts--;
      if (at > 0) {
        pairRank[at - 1] = this.rankOf(bounds[at - 1], bounds[at + 1]);
      }
      if (at < parts - 1) {
        pairRank[at] = this.rankOf(bounds[at], bounds[at + 2]);
      }
    }
    return parts;
  }

  private rankOf(start: number, end: number): number {
    const rank = this.table.rank(this.bytes, start, end);
    return rank < 0 ? NOT_A_TOKEN : rank;
  }
}

const UTF8 = new TextEncoder();
