/**
 * Word folding shared by the secrets and the model's output, so both sides agree exactly.
 * A word is a maximal run of letters, digits and marks; each code point is folded on its own
 * (compatibility decomposition, case folding, Latin accents dropped), so the result never
 * depends on where a stream was cut.
 */

/* eslint-disable no-misleading-character-class */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/** Zero-width characters, soft hyphen, joiners, variation selectors, tag characters... */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
/** Combining accents: "é" and "e\u0301" and "e" are one letter here. */
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/gu;
const NOT_WORD = /[^\p{L}\p{N}\p{M}]|\p{Default_Ignorable_Code_Point}/gu;
/* eslint-enable no-misleading-character-class */

/** Non-ASCII folds are cached; the cap bounds what an adversarial output can make us keep. */
const CACHE_CAP = 8192;
const cache = new Map<number, string | null>();

const ASCII: (string | null)[] = Array.from({ length: 128 }, (_, cp) => {
  const ch = String.fromCharCode(cp);
  if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
    return ch;
  }
  return ch >= 'A' && ch <= 'Z' ? ch.toLowerCase() : null;
});

function foldSlow(cp: number): string | null {
  const ch = String.fromCodePoint(cp);
  if (IGNORABLE.test(ch)) {
    return '';
  }
  if (!WORD_CHAR.test(ch)) {
    return null;
  }
  // Upper then lower folds "ß" to "ss" and final sigma to sigma, like case folding.
  return ch
    .normalize('NFKD')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKD')
    .replace(DIACRITICS, '')
    .replace(NOT_WORD, '');
}

/**
 * The folded text a code point adds to a word: `null` for a separator (it ends the word),
 * `''` for a code point that is ignored (zero-width characters, a lone accent).
 */
export function foldCodePoint(cp: number): string | null {
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

/** The folded words of a whole text. */
export function toWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  for (const ch of text) {
    const folded = foldCodePoint(ch.codePointAt(0) ?? 0);
    if (folded === null) {
      if (word !== '') {
        words.push(word);
        word = '';
      }
    } else {
      word += folded;
    }
  }
  if (word !== '') {
    words.push(word);
  }
  return words;
}
