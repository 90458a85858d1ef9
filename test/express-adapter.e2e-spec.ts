import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const SCRIPT = join(__dirname, 'support', 'hidden-classes.ts');

function run(...args: string[]): { res: boolean; req: boolean; express: boolean } {
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '-r', 'ts-node/register/transpile-only', SCRIPT, ...args],
    { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(out) as { res: boolean; req: boolean; express: boolean };
}

describe('GatewayExpressAdapter', () => {
  it('serves express requests whose req and res share their hidden classes', () => {
    expect(run()).toEqual({ res: true, req: true, express: true });
  });

  it("is needed: on Nest's own server every req and res gets a hidden class of its own", () => {
    expect(run('--nest')).toEqual({ res: false, req: false, express: true });
  });
});
