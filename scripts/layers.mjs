#!/usr/bin/env node
// @ts-check
/**
 * `node scripts/layers.mjs [--list]`: measures how src/ keeps to its layer order
 * (eslint-rules/layers.mjs, drawn in docs/architecture.md#layers) from the code's own
 * imports. Prints
 * - wrong-way imports: import statements (type-only included) against the order, less the
 *   commented allowlist;
 * - file cycles: groups of files that import each other around a loop (strongly connected
 *   components), counted over runtime imports (what Node loads) and over all imports;
 * - the runtime folder loop: the largest set of src/ folders that reach each other through
 *   runtime imports.
 * Specs (*.spec.ts) are left out: they test a folder from outside. With --list, every
 * wrong-way import, cycle and loop is named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { ALLOWED, folderOf, resolveImport, violation } from '../eslint-rules/layers.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const list = process.argv.includes('--list');

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return walk(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every relative module specifier a file names: imports, re-exports, import() and require(). */
function specifiersOf(sourceFile) {
  const found = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
      node.arguments.length === 1 &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) {
        found.push(literal.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/**
 * What Node loads: the specifiers left after TypeScript drops the imports used only as
 * types (the same elision the build does, file by file).
 */
function runtimeSpecifiersOf(text, fileName) {
  const out = ts.transpileModule(text, {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
    },
  }).outputText;
  return [...out.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
}

const files = walk(src);
/** @type {Map<string, Set<string>>} */ const allEdges = new Map();
/** @type {Map<string, Set<string>>} */ const runtimeEdges = new Map();
const wrongWay = [];
let allowlisted = 0;

for (const path of files) {
  const id = relative(src, path).replace(/\.ts$/, '');
  const text = readFileSync(path, 'utf8');
  const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const all = new Set();
  for (const specifier of specifiersOf(sourceFile)) {
    const target = resolveImport(path, specifier, src);
    if (target && target !== id && !all.has(target)) {
      all.add(target);
      const why = violation(id, target);
      if (why) {
        wrongWay.push({ from: id, to: target, why });
      } else if (ALLOWED.length > 0 && violation(id, target, { ignoreAllowlist: true })) {
        allowlisted++;
      }
    }
  }
  allEdges.set(id, all);
  const runtime = new Set();
  for (const specifier of runtimeSpecifiersOf(text, path)) {
    const target = resolveImport(path, specifier, src);
    if (target && target !== id) {
      runtime.add(target);
    }
  }
  runtimeEdges.set(id, runtime);
}

/** Strongly connected components of more than one node (Tarjan). */
function loops(edges) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const found = [];
  const connect = (node) => {
    const s = { index, low: index, onStack: true };
    index++;
    state.set(node, s);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) {
        continue;
      }
      const t = state.get(next);
      if (!t) {
        connect(next);
        s.low = Math.min(s.low, state.get(next).low);
      } else if (t.onStack) {
        s.low = Math.min(s.low, t.index);
      }
    }
    if (s.low === s.index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) {
        found.push(component.sort());
      }
    }
  };
  for (const node of edges.keys()) {
    if (!state.has(node)) {
      connect(node);
    }
  }
  return found;
}

function folderGraph(edges) {
  const folders = new Map();
  for (const [from, targets] of edges) {
    const a = folderOf(from);
    if (!folders.has(a)) {
      folders.set(a, new Set());
    }
    for (const to of targets) {
      const b = folderOf(to);
      if (b !== a) {
        folders.get(a).add(b);
      }
    }
  }
  return folders;
}

const runtimeCycles = loops(runtimeEdges);
const allCycles = loops(allEdges);
const folders = folderGraph(runtimeEdges);
const folderLoops = loops(folders);
const biggest = folderLoops.reduce((a, b) => (b.length > a.length ? b : a), []);
const folderCount = [...folders.keys()].filter((f) => f !== '.').length;

console.log(`wrong-way imports:        ${wrongWay.length}`);
console.log(`allowlisted imports:      ${allowlisted}`);
console.log(
  `file cycles (runtime):    ${runtimeCycles.length} (${runtimeCycles.flat().length} files)`,
);
console.log(`file cycles (all):        ${allCycles.length} (${allCycles.flat().length} files)`);
console.log(
  `runtime folder loop:      ${biggest.length} of ${folderCount} folders` +
    (folderLoops.length > 1 ? ` (${folderLoops.length} loops)` : ''),
);
if (list) {
  console.log('\nwrong-way imports:');
  for (const w of wrongWay) {
    console.log(`  src/${w.from} -> src/${w.to}\n      ${w.why}`);
  }
  console.log('\nfile cycles (runtime):');
  for (const c of runtimeCycles) {
    console.log(`  ${c.join(' <-> ')}`);
  }
  console.log('\nfile cycles (type-only imports included):');
  for (const c of allCycles) {
    console.log(`  ${c.join(' <-> ')}`);
  }
  console.log('\nruntime folder loops:');
  for (const c of folderLoops) {
    console.log(`  ${c.join(', ')}`);
  }
  console.log('\nruntime folder edges:');
  for (const [from, to] of [...folders].sort()) {
    console.log(`  ${from} -> ${[...to].sort().join(', ')}`);
  }
}
process.exitCode = 0;
