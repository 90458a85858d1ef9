import { own } from '../../../common/own';
import type { DecodedKind } from './normalize';

/**
 * Encoded content inside a text (base64, hex, URL / HTML / \\u escapes, Morse code): the
 * candidate runs are bounded (MAX_CANDIDATES per text, MAX_ENCODED_RUN characters each) and a
 * decoded run is kept only if it reads as text, so hashes and ids are ignored.
 */

/** Candidate encoded runs examined per text, decodable or not. */
const MAX_CANDIDATES = 24;
const MIN_ENCODED_RUN = 20;
const MAX_ENCODED_RUN = 4096;
/**
 * Hex bytes of printable ASCII separated by spaces, colons or commas ("69 67 6e ..."); every
 * such byte starts with a digit 2-7, which keeps this scan cheap on ordinary prose.
 */
const SPACED_HEX = /\b(?:[2-7][0-9a-f][ :,]){9,2047}[2-7][0-9a-f]\b/gi;
const ESCAPE = /%[0-9a-fA-F]{2}|&#x?[0-9a-fA-F]{1,7};|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}/g;
/** Eight or more Morse letters (dots and dashes separated by spaces or slashes). */
const MORSE_RUN = /(?:[.-]{1,7}(?: {1,3}| ?\/ ?)){7,2000}[.-]{1,7}/g;
const MORSE: Readonly<Record<string, string>> = {
  '.-': 'a',
  '-...': 'b',
  '-.-.': 'c',
  '-..': 'd',
  '.': 'e',
  '..-.': 'f',
  '--.': 'g',
  '....': 'h',
  '..': 'i',
  '.---': 'j',
  '-.-': 'k',
  '.-..': 'l',
  '--': 'm',
  '-.': 'n',
  '---': 'o',
  '.--.': 'p',
  '--.-': 'q',
  '.-.': 'r',
  '...': 's',
  '-': 't',
  '..-': 'u',
  '...-': 'v',
  '.--': 'w',
  '-..-': 'x',
  '-.--': 'y',
  '--..': 'z',
  '.----': '1',
  '..---': '2',
  '...--': '3',
  '....-': '4',
  '.....': '5',
  '-....': '6',
  '--...': '7',
  '---..': '8',
  '----.': '9',
  '-----': '0',
  '.-.-.-': '.',
  '--..--': ',',
  '..--..': '?',
};

function decodeMorse(run: string): string | undefined {
  const words = run.trim().split(/ {2,3}| ?\/ ?/);
  let known = 0;
  let total = 0;
  const out = words.map((w) =>
    w
      .split(' ')
      .map((code) => {
        total += 1;
        const ch = own(MORSE, code);
        if (ch !== undefined) {
          known += 1;
        }
        return ch ?? '';
      })
      .join(''),
  );
  return total >= 8 && known >= 0.9 * total ? out.join(' ') : undefined;
}

export function countMatches(re: RegExp, text: string, limit: number): number {
  re.lastIndex = 0;
  let n = 0;
  while (n < limit && re.exec(text) !== null) {
    n += 1;
  }
  re.lastIndex = 0;
  return n;
}

function isReadable(text: string): boolean {
  if (text.length < 8) {
    return false;
  }
  let good = 0;
  let letters = 0;
  let spaces = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x20) {
      spaces += 1;
    }
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) {
      letters += 1;
    }
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x09 || (c > 0xa0 && c !== 0xfffd)) {
      good += 1;
    }
  }
  return good >= 0.95 * text.length && letters >= 0.5 * text.length && spaces >= 1;
}

function decodeBase64(run: string): string | undefined {
  if (!/[A-Z]/.test(run) || !/[a-z]/.test(run)) {
    return undefined;
  }
  const body = run.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (body.length % 4 === 1) {
    return undefined;
  }
  const out = Buffer.from(body, 'base64').toString('utf8');
  return isReadable(out) ? out : undefined;
}

function decodeHex(run: string): string | undefined {
  const hex = run.replace(/0x|\\x|[\s,:]/g, '');
  if (hex.length < MIN_ENCODED_RUN || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) {
    return undefined;
  }
  const out = Buffer.from(hex, 'hex').toString('utf8');
  return isReadable(out) ? out : undefined;
}

function decodeEscapes(text: string): string | undefined {
  const decoded = text
    .replace(/(?:%[0-9a-fA-F]{2}){1,512}/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
      }
    })
    .replace(/&#(x?)([0-9a-fA-F]{1,7});/g, (whole, x: string, n: string) => {
      const cp = parseInt(n, x === '' ? 10 : 16);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    })
    .replace(/\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})/g, (_w, u?: string, x?: string) =>
      String.fromCharCode(parseInt(u ?? x ?? '0', 16)),
    );
  return decoded !== text ? decoded : undefined;
}

export function rot13(text: string): string {
  return text.replace(/[a-z]/g, (c) =>
    String.fromCharCode(((c.charCodeAt(0) - 97 + 13) % 26) + 97),
  );
}

function isBase64Char(c: number): boolean {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 43 ||
    c === 47 ||
    c === 45 ||
    c === 95
  );
}

/** Runs of base64-alphabet characters (which includes contiguous hex), found by one linear scan. */
function encodedRuns(text: string): string[] {
  const runs: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n && runs.length < MAX_CANDIDATES) {
    if (!isBase64Char(text.charCodeAt(i))) {
      i += 1;
      continue;
    }
    let j = i + 1;
    while (j < n && isBase64Char(text.charCodeAt(j))) {
      j += 1;
    }
    let end = j;
    while (end < n && end - j < 2 && text.charCodeAt(end) === 61) {
      end += 1;
    }
    if (j - i >= MIN_ENCODED_RUN && j - i <= MAX_ENCODED_RUN) {
      runs.push(text.slice(i, end));
    }
    i = end;
  }
  return runs;
}

/** Finds encoded runs in `text` (case preserved) and returns their decoded plain text. */
export function findEncoded(text: string, budget: number): { kind: DecodedKind; raw: string }[] {
  const out: { kind: DecodedKind; raw: string }[] = [];
  for (const run of encodedRuns(text)) {
    if (out.length >= budget) {
      return out;
    }
    const hex = decodeHex(run);
    if (hex !== undefined) {
      out.push({ kind: 'hex', raw: hex });
      continue;
    }
    const b64 = decodeBase64(run);
    if (b64 !== undefined) {
      out.push({ kind: 'base64', raw: b64 });
    }
  }
  let candidates = 0;
  for (const m of text.matchAll(SPACED_HEX)) {
    if (out.length >= budget || candidates >= MAX_CANDIDATES) {
      return out;
    }
    candidates += 1;
    const decoded = decodeHex(m[0]);
    if (decoded !== undefined) {
      out.push({ kind: 'hex', raw: decoded });
    }
  }
  if (text.includes('-.') || text.includes('.-')) {
    for (const m of text.matchAll(MORSE_RUN)) {
      if (out.length >= budget) {
        return out;
      }
      const decoded = decodeMorse(m[0]);
      if (decoded !== undefined) {
        out.push({ kind: 'morse', raw: decoded });
      }
    }
  }
  if (out.length < budget && countMatches(ESCAPE, text, 4) >= 4) {
    const decoded = decodeEscapes(text);
    if (decoded !== undefined) {
      out.push({ kind: 'escapes', raw: decoded });
    }
  }
  return out;
}
