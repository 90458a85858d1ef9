import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const VERSION = (
  JSON.parse(
    readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  ) as { version: string }
).version;

/** An initialized PGlite cluster that every suite copies (per PGlite version). */
const TEMPLATE = join(tmpdir(), `gw-pglite-template-${VERSION}`);

/**
 * Makes the template once (Jest's global setup calls this before any worker starts): PGlite
 * spends most of its start in initdb, 3-4 s of CPU, which a copy of an initialized cluster
 * skips. Written aside and renamed, so concurrent runs never see half a cluster.
 */
export function ensurePgliteTemplate(): void {
  if (existsSync(TEMPLATE)) {
    return;
  }
  const partial = `${TEMPLATE}.${process.pid}.partial`;
  const script = `import('@electric-sql/pglite').then(async ({ PGlite }) => {
    const db = new PGlite(${JSON.stringify(partial)});
    await db.waitReady;
    await db.close();
  })`;
  const made = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, stdio: 'inherit' });
  if (made.status !== 0) {
    throw new Error('could not initialize the PGlite template');
  }
  try {
    renameSync(partial, TEMPLATE);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(TEMPLATE)) {
      throw err;
    }
  }
}

/** Where a test run's copies go: made by the global setup, removed by the global teardown. */
export const DATA_ROOT_ENV = 'GW_TEST_DATA_ROOT';

/**
 * A `DATA_DIR` of its own holding a fresh, empty PGlite cluster: what `memory://` gives, in
 * about a second instead of several. Removed with the run's folder at the end of the run
 * (or at once by `removeDataDir`).
 */
export function freshDataDir(): string {
  ensurePgliteTemplate();
  const dir = mkdtempSync(join(process.env[DATA_ROOT_ENV] ?? tmpdir(), 'gw-data-'));
  // The gateway keeps its PGlite cluster in DATA_DIR/pglite.
  cpSync(TEMPLATE, join(dir, 'pglite'), { recursive: true });
  return dir;
}

/** Removes a directory made by `freshDataDir` (its gateway closed). */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
