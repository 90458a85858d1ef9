import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATA_ROOT_ENV, ensurePgliteTemplate } from './pglite';

/**
 * Jest's global setup of the e2e project: brings dist/ up to date once, before any worker
 * starts, so that suites that run the gateway as its own process start `node dist/main.js`
 * in about a second instead of transpiling src/ with ts-node in every child (15-20 s on a
 * busy 2-core machine). A no-op when nothing changed since the last build. Also makes the
 * initialized PGlite cluster that suites copy (pglite.ts).
 */
export default function globalSetup(): void {
  const root = join(__dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  ensurePgliteTemplate();
  // Workers inherit it: their PGlite copies go there, and the teardown removes it whole.
  process.env[DATA_ROOT_ENV] = mkdtempSync(join(tmpdir(), 'gw-test-run-'));
}

/** The compiled entry point the global setup keeps current. */
export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'main.js');
