import type { TiktokenBPE } from 'js-tiktoken/lite';

/**
 * Counts the tokens a tiktoken encoding produces for a text, without building the token
 * list. It reads js-tiktoken's rank tables and split pattern and gives the same counts as
 * `Tiktoken.encode(text, [], []).length` (the spec checks this on several corpora), but:
 *
 * - merges are O(n²) per piece over latin1 strings instead of O(n³) with `join(',')`
 *   keys, so an unspaced CJK sentence costs microseconds instead of tens of milliseconds;
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

export class BpeCounter {
  private readonly ranks = new Map<string, number>();
  private readonly pattern: RegExp;
  private readonly cache = new Map<string, number>();
  private readonly texts = new Map<string, number>();
  private textChars = 0;

  constructor(bpe: TiktokenBPE) {
    this.pattern = new RegExp(bpe.pat_str, 'gu');
    for (const line of bpe.bpe_ranks.split('\n')) {
      if (line === '') {
        continue;
      }
      // Each line: "<ignored> <first rank> <base64 token> <base64 token> ..."
      const fields = line.split(' ');
      const offset = Number(fields[1]);
      for (let i = 2; i < fields.length; i++) {
        this.ranks.set(Buffer.from(fields[i], 'base64').toString('latin1'), offset + i - 2);
      }
    }
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
    const bytes = toLatin1Bytes(piece);
    let n = 0;
    for (let start = 0; start < bytes.length; start += MAX_PIECE_BYTES) {
      n += this.merge(bytes.slice(start, start + MAX_PIECE_BYTES));
    }
    if (piece.length <= CACHEABLE_PIECE_CHARS) {
      if (this.cache.size >= CACHE_LIMIT) {
        this.cache.clear();
      }
      this.cache.set(piece, n);
    }
    return n;
  }

  /** Byte-pair merge of one piece (bytes as a latin1 string); returns the token count. */
  private merge(bytes: string): number {
    if (bytes.length <= 1 || this.ranks.has(bytes)) {
      return Math.min(bytes.length, 1);
    }
    // bounds[i]..bounds[i+1] is part i; pairRank[i] is the rank of parts i and i+1 merged.
    const bounds: number[] = [];
    for (let i = 0; i <= bytes.length; i++) {
      bounds.push(i);
    }
    const pairRank: number[] = [];
    for (let i = 0; i < bytes.length - 1; i++) {
      pairRank.push(this.rankOf(bytes, i, i + 2));
    }
    while (pairRank.length > 0) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i < pairRank.length; i++) {
        if (pairRank[i] < best) {
          best = pairRank[i];
          at = i;
        }
      }
      if (at < 0) {
        break;
      }
      bounds.splice(at + 1, 1);
      pairRank.splice(at, 1);
      if (at > 0) {
        pairRank[at - 1] = this.rankOf(bytes, bounds[at - 1], bounds[at + 1]);
      }
      if (at < pairRank.length) {
        pairRank[at] = this.rankOf(bytes, bounds[at], bounds[at + 2]);
      }
    }
    return bounds.length - 1;
  }

  private rankOf(bytes: string, start: number, end: number): number {
    return this.ranks.get(bytes.slice(start, end)) ?? Infinity;
  }
}

/** The UTF-8 bytes of `text` as a latin1 string (one char per byte); ASCII is returned as is. */
function toLatin1Bytes(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      return Buffer.from(text, 'utf8').toString('latin1');
    }
  }
  return text;
}
