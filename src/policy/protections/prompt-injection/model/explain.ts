import { isSingleCharWord, isWordChar, wordBuckets, wordHash } from './features';
import type { LinearParams } from './linear';

/** Longest phrase reported as evidence, in words. */
const MAX_PHRASE_WORDS = 3;

function words(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    if (isWordChar(c) && !isSingleCharWord(c)) {
      current += ch;
      continue;
    }
    if (current !== '') {
      out.push(current);
      current = '';
    }
    if (isWordChar(c)) {
      out.push(ch);
    }
  }
  if (current !== '') {
    out.push(current);
  }
  return out;
}

/**
 * The word n-gram of a window that raised its score most, as evidence for the explanation
 * (the gateway never logs it; the second stage uses it to excerpt long parts). Recomputes
 * the hashes of the window's words, so it is only called for the winning window.
 */
export function topPhrase(
  p: LinearParams,
  text: string,
): { phrase: string; weight: number } | undefined {
  const shift = 32 - p.bits;
  const ws = words(text);
  const hashes = ws.map(wordHash);
  let best: { phrase: string; weight: number } | undefined;
  for (let i = 0; i < ws.length; i += 1) {
    const buckets = wordBuckets(hashes[i - 2] ?? 0, hashes[i - 1] ?? 0, hashes[i], shift);
    for (let k = 0; k < MAX_PHRASE_WORDS && k <= i; k += 1) {
      const weight = p.grams[buckets[k]] * p.scale;
      if (weight > 0 && (best === undefined || weight > best.weight)) {
        const joiner = ws.slice(i - k, i + 1).every((w) => w.length === 1) ? '' : ' ';
        best = { phrase: ws.slice(i - k, i + 1).join(joiner), weight };
      }
    }
  }
  return best;
}
