import type { Browser } from 'playwright-core';
import { startGateway, testCatalog, type TestGateway } from '../support/gateway';
import { describeWithChromium, launchChromium } from './browser';
import { signIn, startProvider } from './oidc-helpers';
import { freshDataDir } from '../support/pglite';

const ADMIN_TOKEN = 'console-oidc-admin-token-0123456789';

describeWithChromium('console sign-in with OpenID Connect', () => {
  let provider: Awaited<ReturnType<typeof startProvider>>;
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    [provider, browser] = await Promise.all([startProvider(), launchChromium()]);
    gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      KEY_STORE: 'database',
      DATA_DIR: freshDataDir(),
      REDIS_URL: '',
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: 'gateway-console',
      CONSOLE_OIDC_CLIENT_SECRET: 'gateway-console-secret',
      CONSOLE_OIDC_ADMIN_EMAILS: 'alice@example.com',
    });
    await provider.ready(`${gw.origin}/console/oidc/callback`);
    for (const [name, owner] of [
      ['team-a-key', 'team-a'],
      ['team-b-key', 'team-b'],
    ]) {
      const res = await fetch(`${gw.origin}/admin/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, owner }),
      });
      expect(res.status).toBe(201);
    }
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    provider?.child.kill();
  });

  it('signs a member in with code + PKCE and shows them only their team', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const authorize: string[] = [];
      page.on('request', (r) => {
        if (r.url().startsWith(`${provider.issuer}/auth`)) {
          authorize.push(r.url());
        }
      });
      await signIn(page, gw.origin, 'bob');
      await page.waitForSelector('tr:has-text("team-b-key")');
      expect(await page.$('tr:has-text("team-a-key")')).toBeNull();
      expect(await page.textContent('#who')).toBe('bob@example.com · team-b');
      const query = new URL(authorize[0]).searchParams;
      expect(query.get('code_challenge_method')).toBe('S256');
      expect(query.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('signs a listed e-mail in as admin, who sees every team', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, gw.origin, 'alice');
      await page.waitForSelector('tr:has-text("team-a-key")');
      await page.waitForSelector('tr:has-text("team-b-key")');
      expect(await page.textContent('#who')).toBe('alice@example.com · admin');
    } finally {
      await context.close();
    }
  }, 30_000);

  it('does not make an admin of an unverified e-mail that matches an admin e-mail in another case', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, gw.origin, 'mallory');
      await page.waitForSelector('text=has not verified it');
      const session = await page.request.get(`${gw.origin}/console/session.json`);
      expect(session.status()).toBe(401);
      const keys = await page.request.get(`${gw.origin}/admin/v1/keys`);
      expect(keys.status()).toBe(401);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('refuses an identity that is neither an admin nor in a team', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, gw.origin, 'nobody');
      await page.waitForSelector("text=no 'team' claim");
      const session = await page.request.get(`${gw.origin}/console/session.json`);
      expect(session.status()).toBe(401);
    } finally {
      await context.close();
    }
  }, 30_000);
});
