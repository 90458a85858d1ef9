import type { PatternSpec } from './signals';

/** Building blocks of the signal patterns: bounded gaps only, so matching stays linear. */

/** Separator between two words: 1-4 non-alphanumeric characters. */
export const SEP = '[^a-z0-9]{1,4}';
/** One word. */
export const WD = "[a-z0-9']{1,20}";
/** Up to `n` filler words, then a separator. */
export const gap = (n: number): string => `${SEP}(?:${WD}${SEP}){0,${n}}`;
export const alt = (...parts: string[]): string => parts.join('|');
export const re = (...parts: string[]): RegExp => new RegExp(parts.join('|'), 'g');
export const p = (...parts: string[]): PatternSpec => ({ alts: parts });
