import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Lints `fixture` with only `rule` on, as `npm run lint` runs it: the lines it reports. */
function reportedLines(rule: string, fixture: string): { reported: number[]; expected: number[] } {
  const root = join(__dirname, '..');
  const file = join(root, fixture);
  const run = spawnSync(
    join(root, 'node_modules/.bin/eslint'),
    ['--format', 'json', '--rule', JSON.stringify({ [rule]: 'error' }), file],
    { cwd: root, encoding: 'utf8' },
  );
  const [result] = JSON.parse(run.stdout) as {
    messages: { ruleId: string | null; line: number }[];
  }[];
  expect(result.messages.filter((m) => m.ruleId !== rule)).toEqual([]);
  const expected = readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, i) => (line.includes('// flagged') ? [i + 1] : []));
  expect(expected.length).toBeGreaterThan(0);
  return { reported: result.messages.map((m) => m.line).sort((a, b) => a - b), expected };
}

/**
 * Rules checked on a fixture whose expected reports are marked line by line, run through
 * the CLI as `npm run lint` runs them, so that a TypeScript or typescript-eslint upgrade
 * cannot silently change what they see. local/no-inherited-lookup keeps client- and
 * upstream-supplied keys away from Object.prototype; local/no-closure-assigned-to-property
 * keeps per-request closures out of V8's old space (see the rule's doc comment).
 */
describe.each([
  ['local/no-inherited-lookup', 'test/fixtures/lint/inherited-lookup.ts'],
  ['local/no-closure-assigned-to-property', 'test/fixtures/lint/closure-assigned.ts'],
])('lint rule %s', (rule, fixture) => {
  jest.setTimeout(120_000);

  it('reports exactly the lines the fixture marks as flagged', () => {
    const { reported, expected } = reportedLines(rule, fixture);
    expect(reported).toEqual(expected);
  });
});

/**
 * local/layer-order (eslint-rules/layer-order.mjs) keeps src/ to its layer order. Sources
 * are fed on stdin as if they lived in the named src/ folder (lines marked `// flagged`
 * must be reported, the others must not), with a config that holds only that rule.
 */
describe('lint rule local/layer-order', () => {
  jest.setTimeout(120_000);
  const root = join(__dirname, '..');

  const FIXTURES: Record<string, string[]> = {
    'src/core/layer-fixture.ts': [
      "import { WIRE_FORMATS } from '../formats/wire-formats'; // flagged",
      "import type { AllConfig } from '../config';",
      "export { routedPath } from '../common/key-policy';",
      "import { Observable } from 'rxjs';",
      "export type Views = typeof import('../admin/views'); // flagged",
      "export const lazy = () => import('../upstream/provider-registry'); // flagged",
      'export const used = [WIRE_FORMATS, Observable];',
      'export type Used = AllConfig;',
    ],
    'src/upstream/layer-fixture.ts': [
      "import { LimitsService } from '../limits/limits.service'; // flagged",
      "import { CatalogService } from '../catalog/catalog.service';",
      "import type { ObservedRequest } from '../common/observed-request';",
      "import { MetricsService } from '../observability/metrics/metrics.service';",
      "export const plan = require('../resilience/fallback-plan'); // flagged",
      'export const used = [LimitsService, CatalogService, MetricsService];',
      'export type Used = ObservedRequest;',
    ],
    'src/observability/layer-fixture.ts': [
      "import { AuthGuard } from '../auth/auth.guard'; // flagged",
      "import type { RequestPlan } from '../formats/shared/request-plan'; // flagged",
      "import { CatalogService } from '../catalog/catalog.service';",
      'export const used = [AuthGuard, CatalogService];',
      'export type Used = RequestPlan;',
    ],
    'src/admin/layer-fixture.ts': [
      "import { AdminAuth } from '../console/admin-auth';",
      "import { WIRE_FORMATS } from '../formats/wire-formats';",
      'export const used = [AdminAuth, WIRE_FORMATS];',
    ],
    'src/console/layer-fixture.ts': [
      "import { AdminGuard } from '../admin/admin.guard'; // flagged",
      'export const used = [AdminGuard];',
    ],
    'src/unplaced-folder/layer-fixture.ts': [
      "import { own } from '../common/own'; // flagged",
      'export const used = [own];',
    ],
  };

  function lint(path: string, lines: string[]): { line: number; message: string }[] {
    const run = spawnSync(
      join(root, 'node_modules/.bin/eslint'),
      [
        '--no-warn-ignored',
        '--format',
        'json',
        '-c',
        'test/fixtures/lint/layer-order.config.mjs',
        '--stdin',
        '--stdin-filename',
        path,
      ],
      { cwd: root, encoding: 'utf8', input: lines.join('\n') + '\n' },
    );
    const [result] = JSON.parse(run.stdout) as {
      messages: { ruleId: string | null; line: number; message: string }[];
    }[];
    expect(result.messages.filter((m) => m.ruleId !== 'local/layer-order')).toEqual([]);
    return result.messages;
  }

  it.each(Object.keys(FIXTURES))('reports exactly the flagged imports in %s', (path) => {
    const lines = FIXTURES[path];
    const expected = lines.flatMap((line, i) => (line.includes('// flagged') ? [i + 1] : []));
    expect(lint(path, lines).map((m) => m.line)).toEqual(expected);
  });

  it('names both layers and points to the architecture document', () => {
    const [report] = lint('src/core/layer-fixture.ts', FIXTURES['src/core/layer-fixture.ts']);
    expect(report.message).toContain('core/ (layer 1 of 8: base = core, common, config)');
    expect(report.message).toContain('formats/ (layer 6 of 8: formats = formats)');
    expect(report.message).toContain('docs/architecture.md#layers');
    const [peer] = lint('src/console/layer-fixture.ts', FIXTURES['src/console/layer-fixture.ts']);
    expect(peer.message).toContain('console/ must not import admin/');
  });

  it('is on for the sources in the repository config, and off for their specs', () => {
    const ruleOf = (file: string): unknown => {
      const run = spawnSync(join(root, 'node_modules/.bin/eslint'), ['--print-config', file], {
        cwd: root,
        encoding: 'utf8',
      });
      const config = JSON.parse(run.stdout) as { rules: Record<string, unknown[]> };
      return config.rules['local/layer-order']?.[0];
    };
    expect(ruleOf('src/core/canonical.ts')).toBe(2);
    expect(ruleOf('src/formats/wire-formats.spec.ts')).toBeUndefined();
  });

  it('finds no wrong-way import and no runtime import cycle in src/ (scripts/layers.mjs)', () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts/layers.mjs')], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^wrong-way imports: +0$/m);
    expect(run.stdout).toMatch(/^file cycles \(runtime\): +0 /m);
    expect(run.stdout).toMatch(/^runtime folder loop: +0 of \d+ folders/m);
  });
});
