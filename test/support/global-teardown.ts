import { rmSync } from 'node:fs';
import { DATA_ROOT_ENV } from './pglite';

/** Jest's global teardown of the e2e project: removes the run's PGlite copies. */
export default function globalTeardown(): void {
  const root = process.env[DATA_ROOT_ENV];
  if (root) {
    rmSync(root, { recursive: true, force: true });
  }
}
