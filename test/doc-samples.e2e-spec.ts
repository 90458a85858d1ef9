import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type TestGateway, startGateway } from './support/gateway';
import { type CodeBlock, ROOT, codeBlocks, manualFiles, read } from './support/markdown';
import { freshDataDir } from './support/pglite';

const run = promisify(execFile);
const ADMIN_TOKEN = 'doc-samples-admin-token-0123456789';

/**
 * The manual's code samples run as written against the local models: every TypeScript or
 * JavaScript block, and every shell block that calls the gateway at localhost:3000, unless
 * a `<!-- not run: reason -->` comment above it says what it needs (Docker, a provider key).
 * Only the address changes: localhost:3000 becomes the gateway booted here on loopback.
 * TypeScript samples are type-checked together with the repository's compiler settings
 * (CommonJS, where top-level await is refused) and then run with ts-node; shell samples run
 * in bash with `set -e` and a curl that fails on an HTTP error, and a `# → "field": "value"`
 * line under a command is checked against its output.
 */
const blocks = manualFiles().flatMap((file) => codeBlocks(file, read(file)));
const isScript = (b: CodeBlock): boolean => ['ts', 'typescript', 'js', 'mjs'].includes(b.lang);
const isShell = (b: CodeBlock): boolean =>
  ['bash', 'sh', 'shell'].includes(b.lang) && b.code.includes('localhost:3000');
const runnable = blocks.filter((b) => (isScript(b) || isShell(b)) && b.notRun === undefined);
const scripts = runnable.filter(isScript);
const shells = runnable.filter(isShell);
const name = (b: CodeBlock): string => `${b.file}:${b.line} (${b.lang})`;

describe('code samples of the manual', () => {
  let gw: TestGateway;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const at = (code: string): string => code.replace(/(?:http:\/\/)?localhost:3000/g, gw.origin);

  beforeAll(async () => {
    gw = await startGateway({
      CATALOG_PATH: join(ROOT, 'config', 'catalog.yaml'),
      KEY_STORE: 'database',
      DATA_DIR: freshDataDir(),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      // The key the README's quick start sets.
      GATEWAY_API_KEYS: 'local-dev-key',
      LOG_LEVEL: 'warn',
    });
    env = { ...process.env, GW_KEY: 'local-dev-key', ADMIN: ADMIN_TOKEN };
    delete env.NODE_OPTIONS; // jest's --experimental-vm-modules is not the reader's
    // Outside the repository, as a reader's project would be, with its packages.
    dir = mkdtempSync(join(tmpdir(), 'gw-doc-samples-'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'commonjs',
          moduleResolution: 'node',
          target: 'ES2022',
          lib: ['ES2023'],
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the samples (one client per format in the README, the rest in docs/)', () => {
    expect(scripts.filter((b) => b.file === 'README.md')).toHaveLength(3);
    expect(scripts.length).toBeGreaterThanOrEqual(5);
    expect(shells.length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((b) => b.notRun !== undefined).map(name)).toEqual([
      // The coding agents' settings and two framework fragments (the compat suite runs them).
      expect.stringMatching(/^docs\/clients\.md/),
      expect.stringMatching(/^docs\/clients\.md/),
      expect.stringMatching(/^docs\/clients\.md/),
      expect.stringMatching(/^docs\/limits\.md/),
      expect.stringMatching(/^docs\/protections\.md/),
    ]);
  });

  it('type-checks every TypeScript sample', async () => {
    const ts = scripts.filter((b) => b.lang === 'ts' || b.lang === 'typescript');
    ts.forEach((b, i) => writeFileSync(join(dir, `sample${i}.ts`), at(b.code)));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '--noEmit', '-p', dir], { env }).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout }),
    );
    expect(result.stdout).toBe('');
  }, 120_000);

  it.each(scripts.map((b) => [name(b), b] as const))(
    'runs %s',
    async (_name, block) => {
      const ext = block.lang === 'mjs' ? 'mjs' : block.lang === 'js' ? 'js' : 'ts';
      const file = join(dir, `run-${block.line}.${ext}`);
      writeFileSync(file, at(block.code));
      const tsNode = join(ROOT, 'node_modules', 'ts-node', 'dist', 'bin.js');
      const argv = ext === 'ts' ? [tsNode, '--transpile-only', file] : [file];
      const { stderr } = await run(process.execPath, argv, { cwd: dir, env }).catch(
        (err: { stdout: string; stderr: string }) => {
          throw new Error(`the sample failed:\n${err.stdout}\n${err.stderr}`);
        },
      );
      expect(stderr).not.toMatch(/Error/);
    },
    60_000,
  );

  it.each(shells.map((b) => [name(b), b] as const))(
    'runs %s',
    async (_name, block) => {
      const script = [
        'set -eo pipefail',
        // An HTTP error fails the sample (its body still shows).
        'curl() { command curl --fail-with-body "$@"; }',
        at(block.code),
      ].join('\n');
      const { stdout } = await run('bash', ['-c', script], { cwd: dir, env }).catch(
        (err: { stdout: string; stderr: string }) => {
          throw new Error(`the sample failed:\n${err.stdout}\n${err.stderr}`);
        },
      );
      expect(stdout.length).toBeGreaterThan(0);
      for (const m of block.code.matchAll(/^# → "([^"]+)": "([^"]*)"/gm)) {
        const value = JSON.stringify(m[2]).slice(1, -1);
        expect(stdout).toMatch(new RegExp(`"${m[1]}"\\s*:\\s*"${escape(value)}"`));
      }
    },
    60_000,
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
