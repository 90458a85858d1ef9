import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The type-aware rule local/no-inherited-lookup (eslint-rules/) keeps client- and
 * upstream-supplied keys away from Object.prototype. A TypeScript or typescript-eslint
 * upgrade could silently change what it sees, so it is run here (through the CLI, as
 * `npm run lint` runs it) on a fixture whose expected reports are marked line by line.
 */
describe('lint rule local/no-inherited-lookup', () => {
  jest.setTimeout(120_000);

  it('reports exactly the lines the fixture marks as flagged', () => {
    const root = join(__dirname, '..');
    const file = join(root, 'test/fixtures/lint/inherited-lookup.ts');
    const run = spawnSync(
      join(root, 'node_modules/.bin/eslint'),
      ['--format', 'json', '--rule', '{"local/no-inherited-lookup":"error"}', file],
      { cwd: root, encoding: 'utf8' },
    );
    const [result] = JSON.parse(run.stdout) as {
      messages: { ruleId: string | null; line: number }[];
    }[];
    const reported = result.messages
      .filter((m) => m.ruleId === 'local/no-inherited-lookup')
      .map((m) => m.line)
      .sort((a, b) => a - b);
    const expected = readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (line.includes('// flagged') ? [i + 1] : []));
    expect(expected.length).toBeGreaterThan(0);
    expect(reported).toEqual(expected);
    expect(result.messages.filter((m) => m.ruleId !== 'local/no-inherited-lookup')).toEqual([]);
  });
});
