// @ts-check
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The layer order of src/, bottom up: a folder imports only from its own layer or the
 * layers below it (type-only imports included). One table for the lint rule
 * (eslint-rules/layer-order.mjs) and the measurement (scripts/layers.mjs); the drawing is
 * in docs/architecture.md#layers.
 */
export const LAYERS = [
  { name: 'base', folders: ['core', 'common', 'config'] },
  { name: 'data', folders: ['catalog', 'db'] },
  { name: 'observability', folders: ['observability'] },
  { name: 'identity', folders: ['auth', 'keys', 'usage', 'audit', 'ownership'] },
  { name: 'serving', folders: ['upstream', 'limits', 'policy', 'resilience'] },
  { name: 'formats', folders: ['formats'] },
  { name: 'surfaces', folders: ['admin', 'console', 'openapi', 'health'] },
  // main.ts, app.module.ts, bootstrap.ts; testing/ is the specs' kit (not built).
  { name: 'app', folders: ['.', 'testing'] },
];

/**
 * Peers in one layer may import each other, except in these directions: the first folder
 * must not import the second (the second sits above it inside the layer).
 */
export const PEER_ORDER = [
  // An upstream provider knows no policy, limits or retries: they meet in formats/.
  ['upstream', 'policy'],
  ['upstream', 'limits'],
  ['upstream', 'resilience'],
  // The limits are not the resilience layer: admission hands them what fallback to price.
  ['limits', 'resilience'],
  // Keys are stored records and the key-store port; auth reads them to say who calls.
  ['keys', 'auth'],
  // The ledger and budgets read the key from the request, not from auth.
  ['usage', 'auth'],
  // Sessions and the admin caller (console/admin-auth.ts) sit under the admin API, which
  // the console's pages call; neither the sign-in nor the pages know the API's handlers.
  ['console', 'admin'],
];

/**
 * Imports that run against the order and stay, each with its reason. `from` and `to` are
 * paths under src/ (a file, or a folder ending in `/`).
 */
export const ALLOWED = [];

const FOLDER_LAYER = new Map(
  LAYERS.flatMap((layer, rank) => layer.folders.map((folder) => [folder, { rank, ...layer }])),
);

/** The top folder of a path relative to src/ ('.' for the files at its root). */
export function folderOf(srcRelative) {
  const parts = srcRelative.split('/');
  return parts.length === 1 ? '.' : parts[0];
}

/** The layer of a top folder of src/, or undefined for a folder the table does not place. */
export function layerOf(folder) {
  return FOLDER_LAYER.get(folder);
}

/** Describes a layer for a message: `formats (layer 6 of 8: formats)`. */
export function describe(folder) {
  const layer = layerOf(folder);
  const name = folder === '.' ? 'src/ root (main, app.module)' : `${folder}/`;
  if (!layer) {
    return `${name} (placed in no layer)`;
  }
  return `${name} (layer ${layer.rank + 1} of ${LAYERS.length}: ${layer.name} = ${layer.folders.join(', ')})`;
}

function allowed(fromFile, toFile) {
  return ALLOWED.some(
    (entry) =>
      (entry.from.endsWith('/') ? fromFile.startsWith(entry.from) : fromFile === entry.from) &&
      (entry.to.endsWith('/') ? toFile.startsWith(entry.to) : toFile === entry.to),
  );
}

/**
 * Why `fromFile` may not import `toFile` (both relative to src/, without extension), or
 * undefined when the import keeps to the order.
 */
export function violation(fromFile, toFile, { ignoreAllowlist = false } = {}) {
  const from = folderOf(fromFile);
  const to = folderOf(toFile);
  if (from === to) {
    return undefined;
  }
  const a = layerOf(from);
  const b = layerOf(to);
  if (!a || !b) {
    return `${!a ? describe(from) : describe(to)} must be placed in eslint-rules/layers.mjs`;
  }
  const wrong =
    b.rank > a.rank ||
    (b.rank === a.rank && PEER_ORDER.some(([low, high]) => low === from && high === to));
  if (!wrong || (!ignoreAllowlist && allowed(fromFile, toFile))) {
    return undefined;
  }
  return b.rank > a.rank
    ? `${describe(from)} must not import ${describe(to)}, a layer above it`
    : `${from}/ must not import ${to}/, which sits above it in their layer`;
}

/**
 * The file a relative specifier names, as a path relative to `srcRoot` without extension
 * (`config/index` for `../config`); undefined for a package or a file outside src/.
 */
export function resolveImport(fromFile, specifier, srcRoot) {
  if (!specifier.startsWith('.')) {
    return undefined;
  }
  const base = resolve(dirname(fromFile), specifier.replace(/\.js$/, ''));
  const found = [`${base}.ts`, join(base, 'index.ts'), base].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  const rel = relative(srcRoot, found ?? `${base}.ts`);
  if (rel.startsWith('..')) {
    return undefined;
  }
  return rel.split(sep).join('/').replace(/\.ts$/, '');
}
