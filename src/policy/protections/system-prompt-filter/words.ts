/**
 * Word folding shared by the secrets and the model's output, so both sides agree exactly.
 * A word is a maximal run of letters, digits and marks; each code point is folded on its own
 * (compatibility decomposition, case folding, Latin accents dropped), so the result never
 * depends on where a stream was cut. Zero-width characters and apostrophes are ignored
 * ("Don't" and "Dont" are one word). Scripts written without spaces (Han, Hiragana, Katakana,
 * Thai, Lao, Khmer, Myanmar) make one word of each character and the marks that follow it.
 */

/* eslint-disable no-misleading-character-class */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/** Zero-width characters, soft hyphen, joiners, variation selectors, tag characters... */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
/** Apostrophes join a word's parts: "don't", "don’t" and "dont" are the same word. */
const APOSTROPHE = /^['\u2018\u2019\u02bc]$/u;
/** Combining accents: "é" and "e\u0301" and "e" are one letter here. */
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/gu;
const NOT_WORD = /[^\p{L}\p{N}\p{M}]|\p{Default_Ignorable_Code_Point}/gu;
const ONLY_MARKS = /^\p{M}+$/u;
/** Scripts written without spaces between words: each character is a word. */
const SOLO =
  /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
/* eslint-enable no-misleading-character-class */

/** Ends the word (spaces, punctuation, symbols). */
export const SEPARATOR = 0;
/** Adds nothing and splits nothing (zero-width characters, apostrophes, lone accents). */
export const IGNORED = 1;
/** Letters, digits: continue the word. */
export const LETTERS = 2;
/** A character of a script without spaces: a word of its own. */
export const SOLO_CHAR = 3;
/** Combining marks only: continue the word, a solo character's word too. */
export const MARKS = 4;

export type FoldKind =
  typeof SEPARATOR | typeof IGNORED | typeof LETTERS | typeof SOLO_CHAR | typeof MARKS;

/** What one code point adds: its kind and its folded text (empty unless a word character). */
export interface Fold {
  readonly kind: FoldKind;
  readonly text: string;
}

const SEPARATOR_FOLD: Fold = { kind: SEPARATOR, text: '' };
const IGNORED_FOLD: Fold = { kind: IGNORED, text: '' };

/** Non-ASCII folds are cached; the cap bounds what an adversarial output can make us keep. */
const CACHE_CAP = 8192;
const cache = new Map<number, Fold>();

const ASCII: Fold[] = Array.from({ length: 128 }, (_, cp) => {
  const ch = String.fromCharCode(cp);
  if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
    return { kind: LETTERS, text: ch };
  }
  if (ch >= 'A' && ch <= 'Z') {
    return { kind: LETTERS, text: ch.toLowerCase() };
  }
  return ch === "'" ? IGNORED_FOLD : SEPARATOR_FOLD;
});

function foldSlow(cp: number): Fold {
  const ch = String.fromCodePoint(cp);
  if (IGNORABLE.test(ch) || APOSTROPHE.test(ch.normalize('NFKD'))) {
    return IGNORED_FOLD;
  }
  if (!WORD_CHAR.test(ch)) {
    return SEPARATOR_FOLD;
  }
  // Upper then lower folds "ß" to "ss" and final sigma to sigma, like case folding.
  const text = ch
    .normalize('NFKD')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKD')
    .replace(DIACRITICS, '')
    .replace(NOT_WORD, '');
  if (text === '') {
    return IGNORED_FOLD;
  }
  if (ONLY_MARKS.test(text)) {
    return { kind: MARKS, text };
  }
  return { kind: SOLO.test(text) ? SOLO_CHAR : LETTERS, text };
}

/** How a code point counts in a word (see the kinds above), with its folded text. */
export function foldCodePoint(cp: number): Fold {
  if (cp < 128) {
    return ASCII[cp];
  }
  let folded = cache.get(cp);
  if (folded === undefined) {
    folded = foldSlow(cp);
    if (cache.size >= CACHE_CAP) {
      cache.clear();
    }
    cache.set(cp, folded);
  }
  return folded;
}

/**
 * Splits text into folded words, one code point at a time. Feeding the same code points in
 * any number of calls gives the same words; the matcher and `toWords` both use it.
 */
export class WordSplitter {
  /** In a word, and whether that word is a solo character (it only takes marks). */
  inWord = false;
  solo = false;

  /**
   * Applies one code point: `ends` when the current word ends before the code point's text,
   * `starts` when that text begins a new word (otherwise it continues the current one).
   */
  step(fold: Fold): { ends: boolean; starts: boolean } {
    switch (fold.kind) {
      case SEPARATOR:
        return this.move(this.inWord, false, false);
      case IGNORED:
        return this.move(false, false, this.solo);
      case SOLO_CHAR:
        return this.move(this.inWord, true, true);
      case MARKS:
        return this.move(false, !this.inWord, this.inWord && this.solo);
      case LETTERS:
        return this.inWord && !this.solo
          ? this.move(false, false, false)
          : this.move(this.inWord, true, false);
    }
  }

  private move(ends: boolean, starts: boolean, solo: boolean): { ends: boolean; starts: boolean } {
    const result = ends ? (starts ? ENDS_STARTS : ENDS) : starts ? STARTS : NOTHING;
    if (ends) {
      this.inWord = false;
    }
    if (starts) {
      this.inWord = true;
    }
    if (this.inWord) {
      this.solo = solo;
    }
    return result;
  }
}

const NOTHING = { ends: false, starts: false };
const ENDS = { ends: true, starts: false };
const STARTS = { ends: false, starts: true };
const ENDS_STARTS = { ends: true, starts: true };

/** The folded words of a whole text. */
export function toWords(text: string): string[] {
  const words: string[] = [];
  const splitter = new WordSplitter();
  let word = '';
  for (const ch of text) {
    const fold = foldCodePoint(ch.codePointAt(0) ?? 0);
    const { ends } = splitter.step(fold);
    if (ends && word !== '') {
      words.push(word);
      word = '';
    }
    word += fold.text;
  }
  if (word !== '') {
    words.push(word);
  }
  return words;
}
