import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { MAIN_JS } from './support/global-setup';

const ROOT = join(__dirname, '..');

/**
 * Runs the gateway as its own process, `node dist/main.js` as in the image, with only
 * the given variables (none inherited, so a developer's DATABASE_URL cannot hide a bug).
 */
function boot(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stopping = false;
    const collect = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (!stopping && output.includes('gateway listening')) {
        stopping = true; // it started: a test fails on the exit code, not a hang
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('production defaults at boot', () => {
  const production = {
    NODE_ENV: 'production',
    GATEWAY_API_KEYS: 'prod-key-0123456789',
    CATALOG_PATH: join(ROOT, 'config', 'catalog.yaml'),
  };

  it('refuses to start without a database or a console secret, naming every variable and the fix', async () => {
    const { code, output } = await boot(production);
    expect(code).toBe(1);
    const fatal = output.split('\n').find((l) => l.startsWith('{"level":60')) ?? output;
    expect(fatal).toContain('Invalid configuration');
    for (const name of ['DATABASE_URL', 'DATA_DIR', 'CONSOLE_SESSION_SECRET', 'CONSOLE_ENABLED']) {
      expect({ name, named: fatal.includes(name) }).toEqual({ name, named: true });
    }
    expect(output).not.toContain('gateway listening');
  }, 60_000);

  it('starts in production with PostgreSQL-less settings chosen on purpose', async () => {
    // Static keys only and no console: nothing is kept, so nothing can be lost.
    const { code, output } = await boot({
      ...production,
      KEY_STORE: 'off',
      CONSOLE_ENABLED: 'false',
    });
    expect({ code, listening: output.includes('gateway listening') }).toEqual({
      code: 0,
      listening: true,
    });
  }, 60_000);
});

describe('embedded database warnings', () => {
  it('warns, above info, when the embedded database is throwaway outside production', async () => {
    const { code, output } = await boot({
      NODE_ENV: 'development',
      GATEWAY_API_KEYS: 'dev-key-0123456789',
      CATALOG_PATH: join(ROOT, 'config', 'catalog.yaml'),
      KEY_STORE: 'database',
      DATA_DIR: 'memory://',
    });
    expect(code).toBe(0);
    const lines = output.split('\n').filter((l) => l.startsWith('{'));
    const warning = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .find((l) => l.msg.includes('embedded database is in memory'));
    expect(warning).toMatchObject({ level: 40 });
    expect(warning?.msg).toMatch(/DATABASE_URL.*DATA_DIR/);
  }, 60_000);
});
