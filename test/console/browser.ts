import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's chromium package; never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * `describe` when Chromium is installed. Without it the suite is skipped loudly on a
 * workstation, and fails under CI (where .ci/run installs it), so it is never silently lost.
 */
export function describeWithChromium(name: string, fn: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, fn);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('has Chromium to run in', () => {
        throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (CI must run these).`);
      });
    });
    return;
  }
  console.warn(
    `\n*** SKIPPING browser suite "${name}": ${CHROMIUM} is missing (apt-get install -y chromium) ***\n`,
  );
  describe.skip(name, fn);
}

/** One headless Chromium per test file, with no background traffic of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
