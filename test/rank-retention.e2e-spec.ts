import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const SCRIPT = join(__dirname, 'support', 'rank-retention.ts');

function retainedBytes(...args: string[]): number {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '-r', 'ts-node/register/transpile-only', SCRIPT, ...args],
    { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return (JSON.parse(out) as { retainedBytes: number }).retainedBytes;
}

describe('rank table loading', () => {
  it("keeps none of the rank modules' megabytes of text once the tables are built", () => {
    expect(retainedBytes()).toBeLessThan(256 * 1024);
  });

  it('keeps none of it either when a rank module must be required', () => {
    expect(retainedBytes('--fallback')).toBeLessThan(256 * 1024);
  });

  it('is needed: a required rank module keeps its text, exports emptied and uncached', () => {
    expect(retainedBytes('--require')).toBeGreaterThan(3 * 1024 * 1024);
  });
});
