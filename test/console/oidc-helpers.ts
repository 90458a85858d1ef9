import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Page } from 'playwright-core';

/** Starts oidc-provider.mjs and returns its issuer and a function to register the redirect URI. */
export async function startProvider(): Promise<{
  issuer: string;
  ready: (...redirectUris: string[]) => Promise<void>;
  /** Changes an account's claims for its next sign-in. */
  setClaims: (account: string, claims: Record<string, unknown>) => Promise<void>;
  child: ChildProcessWithoutNullStreams;
}> {
  const child = spawn(process.execPath, [join(__dirname, 'oidc-provider.mjs')], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const lines = createInterface({ input: child.stdout });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      lines.once('line', (l) => resolve(JSON.parse(l) as Record<string, unknown>));
      child.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}`)));
    });
  const { issuer } = (await next()) as { issuer: string };
  return {
    issuer,
    child,
    ready: async (...redirectUris) => {
      child.stdin.write(`${redirectUris.join(' ')}\n`);
      await next();
    },
    setClaims: async (account, claims) => {
      child.stdin.write(`${JSON.stringify({ account, claims })}\n`);
      await next();
    },
  };
}

/** Signs in through the provider's development login and consent pages. */
export async function signIn(page: Page, origin: string, account: string): Promise<void> {
  await page.goto(`${origin}/console/login`);
  await page.click('text=Sign in with your company account');
  await page.fill('input[name=login]', account);
  await page.fill('input[name=password]', 'any');
  await page.click('button[type=submit]');
  await page.click('button[type=submit]:text("Continue")');
}
