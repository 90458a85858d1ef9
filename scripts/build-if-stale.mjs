#!/usr/bin/env node
/**
 * `npm start`'s prestart step: builds dist/ only when a source is newer than the last build,
 * so a restart with nothing changed starts at once.
 *
 * Inputs: every file and folder under src/ (a folder's mtime moves when a file in it is added,
 * removed or renamed), tsconfig*.json, nest-cli.json, package.json and package-lock.json.
 * The stamp is dist/.build-stamp, whose mtime is the moment the build that wrote it began (an
 * edit made during a build is newer, so the next start builds again); without one, a
 * `npm run build` output counts by its dist/main.js.
 *
 * The build here is transpile-only: each file on its own (`isolatedModules`, as ts-jest runs
 * every test suite), without type checking, which is what made every start take 15-30 s on a
 * 2-core machine. `npm run build` (Docker, CI) and `npm run typecheck` still check types.
 *
 * `--check` prints whether a build is needed and exits 1 when it is, building nothing.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
const CONFIG_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package.json',
  'package-lock.json',
];

/** Newest mtime (ms) of the build's inputs, and the path that has it. */
function newestInput() {
  let newest = { ms: 0, path: '' };
  const see = (path, ms) => {
    if (ms > newest.ms) newest = { ms, path };
  };
  const walk = (dir) => {
    see(dir, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.endsWith('.spec.ts')) see(path, statSync(path).mtimeMs);
    }
  };
  walk(join(root, 'src'));
  for (const name of CONFIG_FILES) {
    const path = join(root, name);
    if (existsSync(path)) see(path, statSync(path).mtimeMs);
  }
  return newest;
}

function builtAt() {
  for (const path of [stamp, join(dist, 'main.js')]) {
    if (existsSync(path)) return statSync(path).mtimeMs;
  }
  return undefined;
}

/** Why a build is needed, or undefined when dist/ is current. */
function staleReason() {
  const built = builtAt();
  if (built === undefined || !existsSync(join(dist, 'main.js'))) return 'no build in dist/';
  const newest = newestInput();
  if (newest.ms > built) return `${relative(root, newest.path)} is newer than the build`;
  return undefined;
}

function build() {
  const started = new Date();
  const require = createRequire(join(root, 'package.json'));
  const ts = require('typescript');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  const options = { ...parsed.options, isolatedModules: true };
  const srcDir = join(root, 'src');
  rmSync(dist, { recursive: true, force: true });
  const made = new Set();
  for (const file of parsed.fileNames) {
    const rel = relative(srcDir, file);
    if (rel.startsWith('..') || rel.endsWith('.d.ts')) continue;
    const out = join(dist, rel.replace(/\.ts$/, '.js'));
    const outDir = dirname(out);
    if (!made.has(outDir)) {
      mkdirSync(outDir, { recursive: true });
      made.add(outDir);
    }
    const source = ts.sys.readFile(file);
    const result = ts.transpileModule(source, {
      compilerOptions: options,
      fileName: relative(outDir, file).split(sep).join('/'),
      reportDiagnostics: true,
    });
    const errors = (result.diagnostics ?? []).filter(
      (d) => d.category === ts.DiagnosticCategory.Error,
    );
    if (errors.length > 0) {
      const text = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      throw new Error(`${relative(root, file)}: ${text.join('; ')}`);
    }
    writeFileSync(out, result.outputText);
    if (result.sourceMapText) writeFileSync(`${out}.map`, result.sourceMapText);
  }
  // nest-cli.json's assets: the console's page is served from dist/console/web.
  cpSync(join(srcDir, 'console', 'web'), join(dist, 'console', 'web'), { recursive: true });
  const ranks = spawnSync(
    process.execPath,
    [join(dist, 'limits', 'tokens', 'write-rank-cache.js')],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (ranks.status !== 0) throw new Error('writing the tokenizer rank tables failed');
  closeSync(openSync(stamp, 'w'));
  utimesSync(stamp, started, started);
  return parsed.fileNames.length;
}

const reason = staleReason();
if (process.argv.includes('--check')) {
  console.log(reason ? `stale: ${reason}` : 'dist/ is current');
  process.exit(reason ? 1 : 0);
}
if (reason) {
  const t0 = performance.now();
  const files = build();
  const ms = Math.round(performance.now() - t0);
  console.error(`built dist/ (${reason}): ${files} files in ${ms} ms, without type checking`);
}
