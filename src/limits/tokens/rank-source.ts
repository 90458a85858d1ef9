import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { decodeRankTable, encodeRankTable } from './rank-cache';
import { RankTable } from './rank-table';

/*
 * Where the token counters' rank tables come from: the binary tables `npm run build`
 * writes beside the compiled code (rank-cache.ts) when they match the installed
 * js-tiktoken, else js-tiktoken's own rank modules, read as JSON.
 */

/** The tiktoken encodings the estimator counts with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

export const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base'];

/** Beside the compiled code: dist/limits/tokens/ranks (absent when running the sources). */
export const RANK_CACHE_DIR = join(__dirname, 'ranks');

const logger = new Logger('TokenEstimator');

/** The split pattern and rank table of `encoding` (tens of ms from text, ~1 ms from the cache). */
export function loadRankTable(
  encoding: EncodingName,
  cacheDir = RANK_CACHE_DIR,
): { patStr: string; table: RankTable } {
  const path = rankModulePath(encoding);
  const source = rankSourceId(encoding, path);
  const cached = source === undefined ? undefined : readCache(cacheDir, encoding, source);
  return cached ?? fromText(path);
}

/**
 * Writes the binary table of every encoding to `dir` (the build does, to
 * {@link RANK_CACHE_DIR}); returns the files written.
 */
export function writeRankCaches(dir = RANK_CACHE_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  return ENCODINGS.map((encoding) => {
    const path = rankModulePath(encoding);
    const source = rankSourceId(encoding, path);
    if (source === undefined) {
      throw new Error(`cannot tell which js-tiktoken ${path} belongs to`);
    }
    const { patStr, table } = fromText(path);
    const file = cacheFile(dir, encoding);
    writeFileSync(file, encodeRankTable(table, patStr, source));
    return file;
  });
}

/**
 * What a table is built from: js-tiktoken's version, the encoding and its rank file's
 * size (read from the package's own package.json, two folders above `dist/ranks`).
 * Undefined when that package.json is not js-tiktoken's.
 */
export function rankSourceId(encoding: EncodingName, path: string): string | undefined {
  try {
    const pkg = JSON.parse(
      readFileSync(join(dirname(path), '..', '..', 'package.json'), 'utf8'),
    ) as { name?: unknown; version?: unknown };
    if (pkg.name !== 'js-tiktoken' || typeof pkg.version !== 'string') {
      return undefined;
    }
    return `js-tiktoken@${pkg.version} ${encoding} ${statSync(path).size}`;
  } catch {
    return undefined;
  }
}

/**
 * js-tiktoken's rank module of `encoding`. The package maps these paths through `exports`,
 * which `moduleResolution: node` cannot type, hence require.resolve.
 */
function rankModulePath(encoding: EncodingName): string {
  return require.resolve(`js-tiktoken/ranks/${encoding}`);
}

/** The table decoded from the rank module's text (tens of ms). */
function fromText(path: string): { patStr: string; table: RankTable } {
  const bpe = readRanks(path);
  return { patStr: bpe.pat_str, table: RankTable.fromText(bpe.bpe_ranks) };
}

function cacheFile(dir: string, encoding: EncodingName): string {
  return join(dir, `${encoding}.bin`);
}

function readCache(
  dir: string,
  encoding: EncodingName,
  source: string,
): { patStr: string; table: RankTable } | undefined {
  let file: Buffer;
  try {
    file = readFileSync(cacheFile(dir, encoding));
  } catch {
    return undefined; // not built (the sources, a test run): the text it is
  }
  const decoded = decodeRankTable(file, source);
  if (decoded === undefined) {
    logger.warn(`${cacheFile(dir, encoding)} is not a table of ${source}: reading the text`);
  }
  return decoded;
}

function readRanks(path: string): TiktokenBPE {
  const table = parseRankModule(readFileSync(path, 'utf8'));
  if (table !== undefined) {
    return table;
  }
  logger.warn(`${path} is not 'module.exports = {JSON};': loading it with require`);
  return requireRanks(path);
}

/**
 * The table of a rank module (`module.exports = {...JSON...};`), read as JSON rather than
 * run: quicker than compiling 1-2 MB of script, and nothing of the text outlives the
 * counter's own compact copy. Undefined when the file is not shaped exactly so (a later
 * js-tiktoken), for `require`.
 */
export function parseRankModule(text: string): TiktokenBPE | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (
    start < 0 ||
    end < start ||
    !/^\s*module\.exports\s*=\s*$/.test(text.slice(0, start)) ||
    !/^\s*;?\s*$/.test(text.slice(end + 1))
  ) {
    return undefined;
  }
  try {
    const table = JSON.parse(text.slice(start, end + 1)) as Partial<TiktokenBPE>;
    return typeof table.bpe_ranks === 'string' && typeof table.pat_str === 'string'
      ? (table as TiktokenBPE)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fallback: a required module whose text must then be let go by hand. This module's
 * `children` keeps the rank module (and so its text) alive for good, the require cache too.
 */
export function requireRanks(path: string): TiktokenBPE {
  /* eslint-disable @typescript-eslint/no-require-imports, local/no-inherited-lookup -- a path require.resolve gave */
  const ranks = require(path) as TiktokenBPE;
  delete require.cache[path];
  /* eslint-enable @typescript-eslint/no-require-imports, local/no-inherited-lookup */
  const at = module.children.findIndex((child) => child.id === path);
  if (at >= 0) {
    module.children.splice(at, 1);
  }
  return ranks;
}
