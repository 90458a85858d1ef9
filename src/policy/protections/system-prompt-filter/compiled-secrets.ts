/** The secrets of a request folded to words and letters and compiled into automata, cached. */
import { toWords } from './words';
import { Automaton, INF } from './leak-automaton';

// Local aliases: a global lookup per call is slow where the global object is not the
// realm's own (jest's vm contexts), and these sit in the hot loops.
const { min, max } = Math;
/** Letter symbols are UTF-16 units; the separators between secrets come after them. */
const UNITS = 0x10000;
/** The secrets of one request, compiled once and shared by every matcher of the request. */
export interface CompiledSecrets {
  /** No secret has a word: nothing can leak. */
  readonly empty: boolean;
  /** Folded secret words, sorted: a word's id is its index, so a prefix is an id range. */
  readonly vocab: readonly string[];
  readonly words: Automaton;
  /** Words in a leak of a secret at least that long (min_overlap). */
  readonly need: number;
  /** Letter level, when some secret has at least `letterNeed` letters. */
  readonly letters: Automaton | undefined;
  readonly letterNeed: number;
}

/** Compiled secrets are cached: the same system prompt comes with every request of an app. */
const CACHE_ENTRIES = 64;
/** Bound on the cache's memory (about 60 bytes per character of secret); a quarter per entry. */
const CACHE_BYTES = 48 << 20;
const cache = new Map<string, { compiled: CompiledSecrets; weight: number }>();
let cacheWeight = 0;

/** Folds the secrets and builds their automata (linear in their length), or reuses them. */
export function compileSecrets(secrets: readonly string[], minOverlap: number): CompiledSecrets {
  const key = JSON.stringify([minOverlap, secrets]);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.compiled;
  }
  const compiled = compile(secrets, minOverlap);
  const weight = key.length * 4 + compiled.words.bytes + (compiled.letters?.bytes ?? 0);
  if (weight * 4 <= CACHE_BYTES) {
    cache.set(key, { compiled, weight });
    cacheWeight += weight;
    for (const [old, entry] of cache) {
      if (cache.size <= CACHE_ENTRIES && cacheWeight <= CACHE_BYTES) {
        break;
      }
      cache.delete(old);
      cacheWeight -= entry.weight;
    }
  }
  return compiled;
}

function compile(secrets: readonly string[], minOverlap: number): CompiledSecrets {
  const need = max(1, minOverlap);
  const letterNeed = max(6 * need, 40);
  const split = secrets.map((s) => toWords(s)).filter((w) => w.length > 0);
  const vocab = [...new Set(split.flat())].sort();
  const ids = new Map(vocab.map((word, id) => [word, id]));

  const total = split.reduce((sum, w) => sum + w.length + 1, 0);
  const syms = new Int32Array(total);
  const slack = new Int32Array(total);
  const short: Int32Array[] = [];
  let at = 0;
  split.forEach((words, s) => {
    const window = min(need, words.length);
    const from = at;
    words.forEach((word, p) => {
      syms[at] = ids.get(word) as number;
      slack[at++] = p + 1 - (words.length - window);
    });
    if (words.length < need) {
      short.push(syms.slice(from, at));
    }
    syms[at] = vocab.length + s;
    slack[at++] = INF;
  });
  const words = new Automaton(syms, slack);
  words.indexRanges();
  if (short.length > 0) {
    words.indexShort(short);
  }

  const texts = split.map((w) => w.join('')).filter((t) => t.length >= letterNeed);
  let letters: Automaton | undefined;
  if (texts.length > 0) {
    const size = texts.reduce((sum, t) => sum + t.length + 1, 0);
    const units = new Int32Array(size);
    const unitSlack = new Int32Array(size);
    let i = 0;
    texts.forEach((text, s) => {
      for (let p = 0; p < text.length; p += 1) {
        units[i] = text.charCodeAt(p);
        unitSlack[i++] = p + 1 - (text.length - letterNeed);
      }
      units[i] = UNITS + s;
      unitSlack[i++] = INF;
    });
    letters = new Automaton(units, unitSlack);
    letters.dropEdges();
  }
  return { empty: vocab.length === 0, vocab, words, need, letters, letterNeed };
}
