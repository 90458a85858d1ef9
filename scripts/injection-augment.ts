/**
 * Augmentations of the prompt-injection training rows (scripts only; the gateway never
 * trains). Each is built from the rows of the current training set alone, so a
 * leave-one-source-out fold never sees its left-out source through them, and each makes
 * pairs: the same carrier or transform with and without an injection, so the transform
 * itself is no cue.
 *
 * - plant: a short injection planted at a random position inside one benign document or
 *   tool output (mid-line, at a line break or inside an HTML comment / JSON string / quote),
 *   half the time one of the carrier's own language; the clean carrier is the negative twin.
 * - perturb: an injection row and a benign row under the same surface transform (upper or
 *   random case, spread whitespace, Cyrillic homoglyphs, zero-width characters, base64 or
 *   rot13 of the text behind a neutral lead-in).
 * - mix: a benign row of one language followed or preceded by an injection row of another,
 *   against two benign rows of those languages.
 * - templates (injection/templates.ts): hand-written injections and benign sentences in 25
 *   languages, planted into benign rows with a benign twin.
 */

/** The fields augmentations read and write (a subset of the training Row). */
export interface AugmentRow {
  id?: string;
  text: string;
  label: 0 | 1;
  slice?: string;
  lang?: string;
  source?: string;
}

/** A seeded PRNG (mulberry32): the same options give the same rows. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PLANT_MAX_CHARS = 400;
const CARRIER_MIN = 200;

type Pick = <T>(list: readonly T[]) => T;

function picker(random: () => number): Pick {
  return <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
}

/** Ways an instruction hides in a carrier (plain, HTML comment, JSON string, quote...). */
export const WRAPS: readonly ((s: string) => string)[] = [
  (s: string): string => s,
  (s: string): string => `<!-- ${s} -->`,
  (s: string): string => JSON.stringify(s).slice(1, -1),
  (s: string): string => `> ${s.replace(/\n/g, '\n> ')}`,
  (s: string): string => `<div style="display:none">${s}</div>`,
  (s: string): string => `\n\n${s}\n\n`,
];

/** A position inside `text`: a line break, a sentence end, or anywhere between words. */
export function insertAt(text: string, random: () => number): number {
  const mode = random();
  const from = Math.floor(random() * text.length);
  if (mode < 0.4) {
    const nl = text.indexOf('\n', from);
    if (nl >= 0) {
      return nl + 1;
    }
  } else if (mode < 0.7) {
    const dot = text.indexOf('. ', from);
    if (dot >= 0) {
      return dot + 2;
    }
  }
  const space = text.indexOf(' ', from);
  return space >= 0 ? space + 1 : from;
}

function isCarrier(r: AugmentRow): boolean {
  return r.label === 0 && r.text.length >= CARRIER_MIN;
}

/** Planted injections in benign documents and tool outputs, with the clean twin. */
export function plantRows(rows: readonly AugmentRow[], count: number, seed: number): AugmentRow[] {
  const carriers = rows.filter(isCarrier);
  const shots = rows.filter((r) => r.label === 1 && r.text.length <= PLANT_MAX_CHARS);
  if (count === 0 || carriers.length === 0 || shots.length === 0) {
    return [];
  }
  const byLang = new Map<string, AugmentRow[]>();
  for (const s of shots) {
    const list = byLang.get(s.lang ?? '') ?? [];
    list.push(s);
    byLang.set(s.lang ?? '', list);
  }
  const random = rng(seed ^ 0x91a7);
  const pick = picker(random);
  const out: AugmentRow[] = [];
  for (let i = 0; i < count; i += 1) {
    const carrier = pick(carriers);
    const sameLang = byLang.get(carrier.lang ?? '');
    const shot = sameLang !== undefined && random() < 0.5 ? pick(sameLang) : pick(shots);
    const at = insertAt(carrier.text, random);
    const planted = pick(WRAPS)(shot.text);
    const text = `${carrier.text.slice(0, at)}${planted} ${carrier.text.slice(at)}`;
    out.push(
      { id: `plant-${i}`, text, label: 1, slice: 'augmented_planted', lang: carrier.lang },
      { id: `plant-clean-${i}`, text: carrier.text, label: 0, slice: 'augmented_carrier' },
    );
  }
  return out;
}

const CYRILLIC = new Map<string, string>(
  Object.entries({
    a: 'а',
    e: 'е',
    o: 'о',
    p: 'р',
    c: 'с',
    x: 'х',
    y: 'у',
    i: 'і',
  }),
);

const PERTURBATIONS: readonly ((s: string, random: () => number) => string)[] = [
  (s) => s.toUpperCase(),
  (s, random) =>
    [...s].map((ch) => (random() < 0.5 ? ch.toUpperCase() : ch.toLowerCase())).join(''),
  (s, random) => s.replace(/ /g, () => (random() < 0.3 ? '  \n ' : '   ')),
  (s, random) => s.replace(/[aeopcxyi]/g, (ch) => (random() < 0.5 ? (CYRILLIC.get(ch) ?? ch) : ch)),
  (s, random) => [...s].map((ch) => (random() < 0.15 ? `${ch}\u200b` : ch)).join(''),
  (s) => `Here is a base64 string: ${Buffer.from(s, 'utf8').toString('base64')}`,
  (s) =>
    `Rot13 text: ${s.replace(/[a-z]/gi, (ch) => {
      const base = ch <= 'Z' ? 65 : 97;
      return String.fromCharCode(((ch.charCodeAt(0) - base + 13) % 26) + base);
    })}`,
];

/** The same surface transform applied to injection rows and to benign rows. */
export function perturbRows(
  rows: readonly AugmentRow[],
  count: number,
  seed: number,
): AugmentRow[] {
  const pos = rows.filter((r) => r.label === 1 && r.text.length <= 2000);
  const neg = rows.filter((r) => r.label === 0 && r.text.length <= 2000);
  if (count === 0 || pos.length === 0 || neg.length === 0) {
    return [];
  }
  const random = rng(seed ^ 0x7e57);
  const pick = picker(random);
  const out: AugmentRow[] = [];
  for (let i = 0; i < count; i += 1) {
    const f = pick(PERTURBATIONS);
    const p = pick(pos);
    const n = pick(neg);
    out.push(
      { id: `perturb-${i}`, text: f(p.text, random), label: 1, slice: 'augmented_perturbed' },
      { id: `perturb-clean-${i}`, text: f(n.text, random), label: 0, slice: 'augmented_perturbed' },
    );
  }
  return out;
}

/** Benign text of one language next to an injection of another, against benign pairs. */
export function mixRows(rows: readonly AugmentRow[], count: number, seed: number): AugmentRow[] {
  const pos = rows.filter((r) => r.label === 1 && r.text.length <= PLANT_MAX_CHARS && r.lang);
  const neg = rows.filter((r) => r.label === 0 && r.text.length <= 1500 && r.lang);
  if (count === 0 || pos.length === 0 || neg.length < 2) {
    return [];
  }
  const random = rng(seed ^ 0x3a11);
  const pick = picker(random);
  const out: AugmentRow[] = [];
  for (let i = 0; i < count; i += 1) {
    const base = pick(neg);
    let shot = pick(pos);
    for (let k = 0; k < 5 && shot.lang === base.lang; k += 1) {
      shot = pick(pos);
    }
    const other = pick(neg);
    const before = random() < 0.5;
    const join = (a: string, b: string): string => (before ? `${b}\n${a}` : `${a}\n${b}`);
    out.push(
      { id: `mix-${i}`, text: join(base.text, shot.text), label: 1, slice: 'augmented_mixed' },
      {
        id: `mix-clean-${i}`,
        text: join(base.text, other.text),
        label: 0,
        slice: 'augmented_mixed',
      },
    );
  }
  return out;
}
