/**
 * Hashed n-gram features of a normalized view, as the trained classifier sees it: character
 * 3-, 4- and 5-grams (whitespace runs folded to one space) and word 1-, 2- and 3-grams, each
 * hashed into 2^bits buckets. Han and kana characters are one-character words, so the word
 * n-grams of Chinese and Japanese are character bigrams and trigrams.
 *
 * An n-gram is counted once per window length (see gramStream): features are close to
 * binary, so repetition adds nothing.
 *
 * Every n-gram carries the position where it ends, in non-decreasing order, so a scorer can
 * sum any window of the text with prefix sums: overlapping windows cost one pass.
 */

/** Which family an n-gram belongs to (for the explanation). */
export const CHAR_GRAM = 0;
export const WORD_GRAM = 1;

/** The n-grams of one view: bucket, end position and family of each, `count` used. */
export interface GramStream {
  ids: Int32Array;
  pos: Int32Array;
  kind: Uint8Array;
  count: number;
}

const FNV_PRIME = 0x01000193;
const CHAR_SEED = 0x2f6b1d35;
const WORD_SEED = 0x811c9dc5;
const SALT_W1 = 0x3c6ef372;
const SALT_W2 = 0x1b873593;
const SALT_W3 = 0x5bd1e995;

function mix(h: number, c: number): number {
  return Math.imul(h ^ c, FNV_PRIME);
}

/** Murmur3's finalizer: FNV alone leaves the high bits, which pick the bucket, poorly mixed. */
function fmix(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function isSpace(c: number): boolean {
  return c <= 32 || c === 0x85 || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
}

/** Letters and digits of any script; punctuation, symbols and spaces separate words. */
export function isWordChar(c: number): boolean {
  if (c < 0x80) {
    return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
  }
  if (c < 0xc0) {
    return c === 0xaa || c === 0xb5 || c === 0xba;
  }
  return !(
    (c >= 0x2000 && c <= 0x2bff) ||
    (c >= 0x3000 && c <= 0x303f) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff0f) ||
    c === 0x37e ||
    c === 0x589 ||
    c === 0x60c ||
    c === 0x61f ||
    c === 0x6d4 ||
    c === 0x964 ||
    c === 0x965
  );
}

/** Han and kana: scripts written without spaces, one character per word. */
export function isSingleCharWord(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff)
  );
}

/** Hash of one word (its characters in order). */
export function wordHash(word: string): number {
  let h = WORD_SEED;
  for (let i = 0; i < word.length; i += 1) {
    h = mix(h, word.charCodeAt(i));
  }
  return h;
}

/** Buckets of the word 1-, 2- and 3-gram ending in `w0` (w1, w2: the words before, or 0). */
export function wordBuckets(
  w2: number,
  w1: number,
  w0: number,
  shift: number,
): [number, number, number] {
  return [
    fmix(w0 ^ SALT_W1) >>> shift,
    fmix(mix(w1, w0) ^ SALT_W2) >>> shift,
    fmix(mix(mix(w2, w1), w0) ^ SALT_W3) >>> shift,
  ];
}

let scratch: GramStream = {
  ids: new Int32Array(4096),
  pos: new Int32Array(4096),
  kind: new Uint8Array(4096),
  count: 0,
};

/**
 * Recently counted buckets (direct-mapped by the bucket's low bits). A bucket is counted
 * again only `spacing` characters after its last count, so a window holds each n-gram about
 * once: repeating a phrase (or `aaaa…`, `=====`, a table rule) cannot inflate a score.
 */
const CACHE_SIZE = 4096;
const cacheId = new Int32Array(CACHE_SIZE);
const cachePos = new Int32Array(CACHE_SIZE);

/**
 * The n-gram stream of `text` (a normalized view), each n-gram counted at most once per
 * `spacing` characters. The result is a shared scratch buffer, valid until the next call:
 * callers that keep it must copy it (see copyStream).
 */
export function gramStream(text: string, bits: number, spacing: number): GramStream {
  const shift = 32 - bits;
  // At most 3 character and 3 word n-grams per character.
  const need = text.length * 6 + 8;
  if (scratch.ids.length < need) {
    scratch = {
      ids: new Int32Array(need),
      pos: new Int32Array(need),
      kind: new Uint8Array(need),
      count: 0,
    };
  }
  const { ids, pos, kind } = scratch;
  cacheId.fill(-1);
  let n = 0;
  const emit = (id: number, at: number, family: number): void => {
    const slot = id & (CACHE_SIZE - 1);
    if (cacheId[slot] === id && at - cachePos[slot] < spacing) {
      return;
    }
    cacheId[slot] = id;
    cachePos[slot] = at;
    ids[n] = id;
    pos[n] = at;
    kind[n] = family;
    n += 1;
  };
  // The last five characters of the whitespace-folded text, newest first.
  let r0 = 32;
  let r1 = 0;
  let r2 = 0;
  let r3 = 0;
  let r4 = 0;
  let filled = 1;
  let prevSpace = true;
  let token = WORD_SEED;
  let inToken = false;
  let w1 = 0;
  let w2 = 0;
  const emitWord = (w0: number, at: number): void => {
    emit(fmix(w0 ^ SALT_W1) >>> shift, at, WORD_GRAM);
    emit(fmix(mix(w1, w0) ^ SALT_W2) >>> shift, at, WORD_GRAM);
    emit(fmix(mix(mix(w2, w1), w0) ^ SALT_W3) >>> shift, at, WORD_GRAM);
    w2 = w1;
    w1 = w0;
  };
  for (let i = 0; i <= text.length; i += 1) {
    // One virtual space after the end closes the last word and the last character n-grams.
    let c = i < text.length ? text.charCodeAt(i) : 32;
    if (isSpace(c)) {
      if (inToken) {
        emitWord(token, i);
        inToken = false;
      }
      if (prevSpace) {
        continue;
      }
      c = 32;
      prevSpace = true;
    } else {
      prevSpace = false;
      if (isWordChar(c)) {
        if (isSingleCharWord(c)) {
          if (inToken) {
            emitWord(token, i);
            inToken = false;
          }
          emitWord(mix(WORD_SEED, c), i);
        } else {
          token = inToken ? mix(token, c) : mix(WORD_SEED, c);
          inToken = true;
        }
      } else if (inToken) {
        emitWord(token, i);
        inToken = false;
      }
    }
    r4 = r3;
    r3 = r2;
    r2 = r1;
    r1 = r0;
    r0 = c;
    filled += 1;
    if (filled >= 3) {
      let h = mix(mix(mix(CHAR_SEED, r0), r1), r2);
      emit(fmix(h) >>> shift, i, CHAR_GRAM);
      if (filled >= 4) {
        h = mix(h, r3);
        emit(fmix(h) >>> shift, i, CHAR_GRAM);
        if (filled >= 5) {
          h = mix(h, r4);
          emit(fmix(h) >>> shift, i, CHAR_GRAM);
        }
      }
    }
  }
  scratch.count = n;
  return scratch;
}

/** A private copy of a stream (gramStream returns a shared buffer). */
export function copyStream(s: GramStream): GramStream {
  return {
    ids: s.ids.slice(0, s.count),
    pos: s.pos.slice(0, s.count),
    kind: s.kind.slice(0, s.count),
    count: s.count,
  };
}

/**
 * Window starts over a view of `length` characters: every `stride`, the last one ending at
 * the end. A view no longer than `window` is one window.
 */
export function windowStarts(length: number, window: number, stride: number): number[] {
  if (length <= window) {
    return [0];
  }
  const starts: number[] = [];
  for (let s = 0; s + window < length; s += stride) {
    starts.push(s);
  }
  starts.push(length - window);
  return starts;
}
