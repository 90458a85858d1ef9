import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from '../support/gateway';

const ROOT = join(__dirname, '..', '..');
const SNIPPETS = join(ROOT, 'src', 'console', 'web', 'snippets.js');

/**
 * The snippets exactly as the console's module builds them, read by a real ES module
 * import in a child process (the page's code is browser JavaScript, not part of the build).
 */
function consoleSnippets(origin: string, key: string, model: string): Record<string, string> {
  const script = `import { keySnippets } from ${JSON.stringify(pathToFileURL(SNIPPETS).href)};
process.stdout.write(JSON.stringify(keySnippets(${JSON.stringify({ origin, key, model })})));`;
  const r = spawnSync(
    process.execPath,
    ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (r.status !== 0) {
    throw new Error(`importing snippets.js failed: ${r.stderr}`);
  }
  return JSON.parse(r.stdout) as Record<string, string>;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a snippet as pasted: into a shell, or as an ES module file beside the SDKs. Never
 * synchronously: the gateway answering it runs in this process.
 */
function paste(kind: 'shell' | 'module', text: string, dir: string): Promise<Run> {
  let command: [string, string[]];
  if (kind === 'shell') {
    command = ['sh', ['-c', text]];
  } else {
    const file = join(dir, `snippet-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(file, text);
    command = [process.execPath, [file]];
  }
  return new Promise((resolve) => {
    execFile(command[0], command[1], { cwd: dir, timeout: 20_000 }, (err, stdout, stderr) => {
      const status = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ status, stdout, stderr });
    });
  });
}

const hasCurl = spawnSync('curl', ['--version']).status === 0;

describe('code snippets shown with a new key', () => {
  let gw: TestGateway;
  let dir: string;
  let snippets: Record<string, string>;

  beforeAll(async () => {
    gw = await startGateway({ CATALOG_PATH: testCatalog('http://127.0.0.1:9') });
    snippets = consoleSnippets(gw.origin, TEST_KEY, 'local-echo-gpt');
    // A pasted module finds the SDKs as a project that installed them would.
    dir = mkdtempSync(join(tmpdir(), 'gw-snippets-'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers curl and both SDKs, each with a system prompt', () => {
    expect(Object.keys(snippets)).toEqual(['curl', 'OpenAI SDK', 'Anthropic SDK']);
    for (const [name, text] of Object.entries(snippets)) {
      expect({ name, system: /system/.test(text), key: text.includes(TEST_KEY) }).toEqual({
        name,
        system: true,
        key: true,
      });
    }
  });

  (hasCurl ? it : it.skip)(
    'answers the curl snippet, pasted into a shell, with a completion',
    async () => {
      const r = await paste('shell', snippets.curl, dir);
      expect(r.status).toBe(0);
      const body = JSON.parse(r.stdout) as { choices?: { message: { content: string } }[] };
      expect(body).not.toHaveProperty('error');
      expect(body.choices?.[0].message.content).toBeTruthy();
    },
  );

  it.each(['OpenAI SDK', 'Anthropic SDK'])(
    'runs the %s snippet as pasted, printing the answer',
    async (name) => {
      const r = await paste('module', snippets[name], dir);
      expect({ name, status: r.status, stderr: r.stderr }).toEqual({ name, status: 0, stderr: '' });
      expect(r.stdout.trim()).not.toBe('');
      expect(r.stdout.trim()).not.toBe('undefined');
    },
  );
});
