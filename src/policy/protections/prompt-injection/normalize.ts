import { own } from '../../../common/own';
import { countMatches, findEncoded, rot13 } from './decode';
import { HOMOGLYPHS } from './homoglyphs';

/**
 * Normalization turns raw text into the views the signals are matched against, so that
 * obfuscation does not hide an instruction. Every regex here has bounded quantifiers and no
 * nested unbounded repetition, and the costlier steps only run when a cheap test says they
 * can change something: the cost is linear in the (capped) input.
 */

/** Characters scanned from the start and from the end of an over-long text. */
export const HEAD_CHARS = 48 * 1024;
export const TAIL_CHARS = 16 * 1024;
/** At most this many decoded runs (base64, hex, escapes, rot13, reversed, tags) are scanned. */
export const MAX_DECODED_VIEWS = 4;
/** Each decoded view is cut to this many characters. */
export const MAX_DECODED_CHARS = 8 * 1024;
/** Texts up to this length always get the squashed (letters-only) view. */
const SQUASH_ALWAYS_CHARS = 2048;

export type DecodedKind = 'base64' | 'hex' | 'escapes' | 'morse' | 'rot13' | 'reversed' | 'tags';

export interface DecodedView {
  kind: DecodedKind;
  /** Normalized decoded text. */
  text: string;
}

export interface ObfuscationStats {
  /** Invisible format characters found inside Latin words. */
  zeroWidth: number;
  /** Unicode tag characters outside emoji flag sequences. */
  tagChars: number;
  /** Words mixing Latin letters with Cyrillic/Greek/Armenian look-alikes. */
  mixedScriptWords: number;
  /** Words written with digits for letters ("1gn0r3"). */
  leetTokens: number;
  /** Runs of spaced-out single letters ("i g n o r e"). */
  spacedRuns: number;
  /** Letters written as regional-indicator emoji (🇮🇬🇳...), beyond flag pairs. */
  emojiLetters: number;
}

export interface NormalizedText {
  /** Main view: lower-case, ASCII-folded, de-obfuscated. */
  text: string;
  /**
   * Letters only, for a few compact phrases split by separators inside words ("ig-no-re").
   * Present for short texts and whenever obfuscation was seen.
   */
  squashed: string | undefined;
  decoded: DecodedView[];
  obfuscation: ObfuscationStats;
  /** True when the input exceeded HEAD_CHARS + TAIL_CHARS and its middle was skipped. */
  truncated: boolean;
}

const NON_ASCII = /[^\p{ASCII}]/u;
// These classes list combining and invisible code points one by one on purpose: they are
// exactly what normalization strips.
/* eslint-disable no-misleading-character-class */
/** Zero-width and other invisible format characters (Cf), fillers, variation selectors, tags. */
const INVISIBLE_SRC =
  '[\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb]|\\udb40[\\udc00-\\udc7f\\udd00-\\uddef]';
const INVISIBLE = new RegExp(INVISIBLE_SRC, 'g');
const INVISIBLE_TEST = new RegExp(INVISIBLE_SRC);
const INVISIBLE_IN_WORD = new RegExp(`[a-zA-Z](?:${INVISIBLE_SRC}){1,16}(?=[a-zA-Z])`, 'g');
const TAG_RUN = /(\u{1F3F4})?([\u{E0000}-\u{E007F}]{1,4096})/gu;
const TAG_TEST = /\udb40[\udc00-\udc7f]/;
/** Latin letters with diacritics, and combining marks (also used for "zalgo" text). */
const ACCENTED = /[\u00c0-\u024f\u1e00-\u1eff]/g;
const COMBINING = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+/g;
/* eslint-enable no-misleading-character-class */
const FOLD: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ł: 'l',
  ħ: 'h',
  '\u2018': "'",
  '\u2019': "'",
  '\u201b': "'",
  '\u2032': "'",
  '`': "'",
  '\u00b4': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u2033': '"',
  '\u00ab': '"',
  '\u00bb': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
};
const FOLD_CHARS =
  /[ßæœøđłħ\u2018\u2019\u201b\u2032`\u00b4\u201c\u201d\u201e\u2033\u00ab\u00bb\u2010-\u2014\u2212]/g;
/** Five or more single letters/digits joined by one to three separator characters. */
const SPACED_RUN = /(?<![a-z0-9])[a-z0-9](?:[ .\-_*|/+~,:'"\u2022\u00b7]{1,3}[a-z0-9]){4,300}/g;
const SPACED_SEP = /[ .\-_*|/+~,:'"\u2022\u00b7]{1,3}/g;
const LETTER_DIGIT = /[a-z][0-9]|[0-9][a-z]/;
const DIGIT_TOKEN = /\b[a-z0-9]*[0-9][a-z0-9]*\b/g;
const LEET: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
};
const OTHER_SPACE =
  / ?[\t\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000][\t\f\v \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]{0,64}| {2,64}/g;
/** Frequent words of English after rot13 ("gur" = "the") and reversed ("eht" = "the"). */
const ENCODED_MARKERS =
  /\b(?:gur|naq|lbh|lbhe|nyy|vtaber|cerivbhf|vafgehpgvbaf|cebzcg|flfgrz|gung|jvgu|vf|snoitcurtsni|erongi|suoiverp|tpmorp|metsys|eht|uoy|dna|ruoy)\b/g;
const REVERSED_MARKER = new Set([
  'snoitcurtsni',
  'erongi',
  'suoiverp',
  'tpmorp',
  'metsys',
  'eht',
  'uoy',
  'dna',
  'ruoy',
]);
/** Regional-indicator symbols U+1F1E6-1F1FF spell A-Z. */
const REGIONAL_INDICATOR = /\ud83c[\udde6-\uddff]/g;
const REGIONAL_RUN = /(?:\ud83c[\udde6-\uddff]){3,}/g;
/** Separators inside a word ("ig-no-re", "in.struc.tions"): worth a squashed view. */
const SPLIT_WORD = /\b[a-z]{1,3}[-.*_|~+][a-z]{1,3}[-.*_|~+][a-z]/;

/** Keeps the first HEAD_CHARS and the last TAIL_CHARS of an over-long text. */
export function capInput(raw: string): { text: string; truncated: boolean } {
  if (raw.length <= HEAD_CHARS + TAIL_CHARS) {
    return { text: raw, truncated: false };
  }
  return { text: `${raw.slice(0, HEAD_CHARS)}\n${raw.slice(-TAIL_CHARS)}`, truncated: true };
}

/** Tag characters (U+E0000-E007F) spell ASCII invisibly; emoji flags use short runs after U+1F3F4. */
function extractTags(text: string): { hidden: string; count: number } {
  let hidden = '';
  let count = 0;
  for (const m of text.matchAll(TAG_RUN)) {
    const run = m[2];
    // Subdivision flags (England, Scotland, Wales) are U+1F3F4 plus at most 7 tag characters.
    if (m[1] !== undefined && run.length <= 2 * 7) {
      continue;
    }
    count += run.length / 2;
    for (const ch of run) {
      const cp = ch.codePointAt(0) ?? 0;
      if (cp >= 0xe0020 && cp <= 0xe007e) {
        hidden += String.fromCharCode(cp - 0xe0000);
      }
    }
  }
  return { hidden, count };
}

function isLetterCode(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 0xc0 && c <= 0x2af && c !== 0xd7 && c !== 0xf7) ||
    (c >= 0x370 && c <= 0x58f) ||
    (c >= 0x1d00 && c <= 0x1eff) ||
    (c >= 0xa720 && c <= 0xa7ff) ||
    c === 0x2113
  );
}

/** True when Latin letters outnumber other letters in the first few KB (lower-case text). */
function latinDominant(text: string): boolean {
  let latin = 0;
  let other = 0;
  const end = Math.min(text.length, 4096);
  for (let i = 0; i < end; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) {
      latin += 1;
    } else if (c > 0x7f && isLetterCode(c)) {
      other += 1;
    }
  }
  return latin > other;
}

/**
 * Maps look-alike letters to ASCII inside words that mix them with Latin letters, and, in
 * mostly-Latin text, inside words made only of look-alikes ("аll" in Cyrillic). Real
 * Cyrillic or Greek text is left alone.
 */
function foldHomoglyphs(text: string, stats: ObfuscationStats): string {
  let out = '';
  let last = 0;
  let i = 0;
  let dominant: boolean | undefined;
  const n = text.length;
  while (i < n) {
    if (text.charCodeAt(i) < 0x80 || !HOMOGLYPHS.has(text[i])) {
      i += 1;
      continue;
    }
    let start = i;
    while (start > last && isLetterCode(text.charCodeAt(start - 1))) {
      start -= 1;
    }
    let end = i + 1;
    while (end < n && end - start < 64 && isLetterCode(text.charCodeAt(end))) {
      end += 1;
    }
    const word = text.slice(start, end);
    let mapped = '';
    let allMapped = true;
    let latin = false;
    let foreign = false;
    for (const ch of word) {
      const ascii = HOMOGLYPHS.get(ch);
      if (ascii !== undefined) {
        mapped += ascii;
        const c = ch.charCodeAt(0);
        foreign ||= c >= 0x370 && c <= 0x58f;
      } else {
        if (ch >= 'a' && ch <= 'z') {
          latin = true;
        } else {
          allMapped = false;
        }
        mapped += ch;
      }
    }
    // Small capitals and IPA look-alikes are Latin letters already: always fold them.
    // Cyrillic, Greek and Armenian words are folded only in mostly-Latin text.
    let fold = latin || (allMapped && !foreign);
    if (!fold && allMapped) {
      dominant ??= latinDominant(text);
      fold = dominant;
    }
    if (fold) {
      stats.mixedScriptWords += 1;
    }
    out += text.slice(last, start) + (fold ? mapped : word);
    last = end;
    i = end;
  }
  return last === 0 ? text : out + text.slice(last);
}

function collapseSpaced(text: string, stats: ObfuscationStats): string {
  return text.replace(SPACED_RUN, (match: string, offset: number) => {
    // The run may end on the first letter of an ordinary word ("i g n o r e all"): give
    // that letter and its separator back.
    let run = match;
    let tail = '';
    const next = text.charCodeAt(offset + match.length);
    if ((next >= 97 && next <= 122) || (next >= 48 && next <= 57)) {
      const cut = run.search(/[ .\-_*|/+~,:'"\u2022\u00b7]{1,3}[a-z0-9]$/);
      tail = run.slice(cut);
      run = run.slice(0, cut);
    }
    let letters = 0;
    for (const ch of run) {
      if (ch >= 'a' && ch <= 'z') {
        letters += 1;
      }
    }
    if (letters < 3 || run.length < 9) {
      return match;
    }
    const seps = run.match(SPACED_SEP) ?? [];
    const shortest = Math.min(...seps.map((s) => s.length));
    if (letters >= 5) {
      stats.spacedRuns += 1;
    }
    // Separators longer than the usual one between letters mark word boundaries.
    return run.replace(SPACED_SEP, (sep) => (sep.length > shortest ? ' ' : '')) + tail;
  });
}

function unleet(text: string, stats: ObfuscationStats): string {
  if (!LETTER_DIGIT.test(text)) {
    return text;
  }
  return text.replace(DIGIT_TOKEN, (token) => {
    if (token.length < 3 || token.length > 24 || !/[a-z]/.test(token)) {
      return token;
    }
    let transitions = 0;
    for (let i = 1; i < token.length; i += 1) {
      const a = token[i - 1] >= '0' && token[i - 1] <= '9';
      const b = token[i] >= '0' && token[i] <= '9';
      if (a !== b) {
        transitions += 1;
      }
    }
    if (transitions < 2 && !/^[013457][a-z]{3,}$/.test(token)) {
      return token;
    }
    const mapped = token.replace(/[0134578]/g, (d) => own(LEET, d) ?? d);
    if (mapped !== token && /[a-z]{4}/.test(mapped.replace(/[0-9]/g, ''))) {
      stats.leetTokens += 1;
      return mapped;
    }
    return token;
  });
}

/** Lower-case, ASCII-fold and de-obfuscate one already invisible-stripped, NFKC text. */
function normalizeView(text: string, stats: ObfuscationStats): string {
  let t = text.toLowerCase();
  if (NON_ASCII.test(t)) {
    t = foldHomoglyphs(t, stats);
    if (t.includes('\ud83c')) {
      for (const m of t.matchAll(REGIONAL_RUN)) {
        stats.emojiLetters += m[0].length / 2;
      }
      t = t.replace(REGIONAL_INDICATOR, (c) => String.fromCharCode(c.charCodeAt(1) - 0xdde6 + 97));
    }
    t = t.replace(ACCENTED, (c) => c.normalize('NFD').replace(COMBINING, ''));
    t = t.replace(COMBINING, '');
    t = t.replace(FOLD_CHARS, (c) => own(FOLD, c) ?? c);
  } else if (t.includes('`')) {
    t = t.replace(/`/g, "'");
  }
  // Spaced letters first: the width of the gaps tells where words end.
  t = unleet(collapseSpaced(t, stats), stats);
  if (NON_ASCII.test(t) || /[\t\f\v]| {2}/.test(t)) {
    t = t.replace(OTHER_SPACE, ' ');
  }
  return t.includes('\r') ? t.replace(/\r\n?/g, '\n') : t;
}

function stripInvisible(text: string, stats: ObfuscationStats): string {
  if (!INVISIBLE_TEST.test(text)) {
    return text;
  }
  stats.zeroWidth += countMatches(INVISIBLE_IN_WORD, text, 1000);
  return text.replace(INVISIBLE, '');
}

function emptyStats(): ObfuscationStats {
  return {
    zeroWidth: 0,
    tagChars: 0,
    mixedScriptWords: 0,
    leetTokens: 0,
    spacedRuns: 0,
    emojiLetters: 0,
  };
}

/** Normalizes `raw` into the main view, a squashed view and up to MAX_DECODED_VIEWS decoded views. */
export function normalizeText(raw: string): NormalizedText {
  const stats = emptyStats();
  const { text: capped, truncated } = capInput(raw);
  const decoded: DecodedView[] = [];
  const addView = (kind: DecodedKind, plain: string, depth: number): void => {
    if (decoded.length >= MAX_DECODED_VIEWS) {
      return;
    }
    const cut = stripInvisible(plain.slice(0, MAX_DECODED_CHARS), stats).normalize('NFKC');
    decoded.push({ kind, text: normalizeView(cut, stats) });
    if (depth < 2) {
      for (const inner of findEncoded(cut, MAX_DECODED_VIEWS - decoded.length)) {
        addView(inner.kind, inner.raw, depth + 1);
      }
    }
  };

  let visible = capped;
  let hiddenTags = '';
  if (NON_ASCII.test(capped)) {
    if (TAG_TEST.test(capped)) {
      const tags = extractTags(capped);
      stats.tagChars = tags.count;
      hiddenTags = tags.hidden;
    }
    visible = stripInvisible(capped, stats).normalize('NFKC');
  }
  const text = normalizeView(visible, stats);

  if (hiddenTags.length > 0) {
    addView('tags', hiddenTags, 1);
  }
  for (const found of findEncoded(visible, MAX_DECODED_VIEWS)) {
    addView(found.kind, found.raw, 1);
  }
  let rot = 0;
  let rev = 0;
  ENCODED_MARKERS.lastIndex = 0;
  for (let i = 0; i < 32 && (rot < 3 || rev < 3); i += 1) {
    const m = ENCODED_MARKERS.exec(text);
    if (m === null) {
      break;
    }
    if (REVERSED_MARKER.has(m[0])) {
      rev += 1;
    } else {
      rot += 1;
    }
  }
  ENCODED_MARKERS.lastIndex = 0;
  if (rot >= 3) {
    addView('rot13', rot13(text.slice(0, MAX_DECODED_CHARS)), 2);
  }
  if (rev >= 3) {
    addView('reversed', Array.from(text.slice(0, MAX_DECODED_CHARS)).reverse().join(''), 2);
  }

  const obfuscated =
    stats.zeroWidth +
      stats.mixedScriptWords +
      stats.leetTokens +
      stats.spacedRuns +
      stats.emojiLetters >
    0;
  const squash = text.length <= SQUASH_ALWAYS_CHARS || obfuscated || SPLIT_WORD.test(text);
  return {
    text,
    squashed: squash ? text.replace(/[^a-z]+/g, '') : undefined,
    decoded,
    obfuscation: stats,
    truncated,
  };
}
