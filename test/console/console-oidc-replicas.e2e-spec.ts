import type { Browser, BrowserContext } from 'playwright-core';
import { AuditLog } from '../../src/audit/audit-log';
import { startGateway, testCatalog, type TestGateway } from '../support/gateway';
import { ADMIN_TOKEN, admin, eventually } from '../support/key-store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../support/postgres';
import { describeWithChromium, launchChromium } from './browser';
import { signIn, startProvider } from './oidc-helpers';

describeWithChromium('single sign-on role changes across two replicas', () => {
  describeWithPostgres('on one PostgreSQL', () => {
    let provider: Awaited<ReturnType<typeof startProvider>>;
    let db: TestDatabase;
    let a: TestGateway;
    let b: TestGateway;
    let browser: Browser;

    beforeAll(async () => {
      [provider, browser, db] = await Promise.all([
        startProvider(),
        launchChromium(),
        createTestDatabase('console_oidc'),
      ]);
      const env = {
        CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
        KEY_STORE: 'database',
        DATABASE_URL: db.url,
        REDIS_URL: '',
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        CONSOLE_SESSION_SECRET: 'console-oidc-replicas-secret-0123456789',
        CONSOLE_OIDC_ISSUER: provider.issuer,
        CONSOLE_OIDC_CLIENT_ID: 'gateway-console',
        CONSOLE_OIDC_CLIENT_SECRET: 'gateway-console-secret',
        CONSOLE_OIDC_ADMIN_EMAILS: 'alice@example.com',
      };
      a = await startGateway(env);
      b = await startGateway(env);
      await provider.ready(
        `${a.origin}/console/oidc/callback`,
        `${b.origin}/console/oidc/callback`,
      );
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await a?.close();
      await b?.close();
      provider?.child.kill();
      await db?.drop();
    });

    const status = async (context: BrowserContext, gw: TestGateway): Promise<number> =>
      (await context.request.get(`${gw.origin}/admin/v1/keys`)).status();

    it('ends on replica A the session of a member whose team changed when they sign in again on replica B', async () => {
      const before = await browser.newContext();
      const after = await browser.newContext();
      try {
        const page = await before.newPage();
        await signIn(page, a.origin, 'bob');
        await page.waitForSelector('#who');
        expect(await status(before, a)).toBe(200);

        await provider.setClaims('bob', { team: 'team-c' });
        const again = await after.newPage();
        await signIn(again, b.origin, 'bob');
        await again.waitForSelector('#who');
        expect(await again.textContent('#who')).toBe('bob@example.com · team-c');

        const { afterMs } = await eventually(
          async () => ((await status(before, a)) === 401 ? true : undefined),
          1000,
          "replica A to refuse bob's team-b session",
        );
        expect(afterMs).toBeLessThan(1000);
        expect(await status(after, a)).toBe(200);

        await b.app.get(AuditLog).flush();
        const changes = await admin(b, 'GET', '/audit?action=console.role_change');
        expect(changes.body.data[0]).toMatchObject({
          actor: { id: 'oidc:bob', name: 'bob@example.com' },
          change: { team: { from: 'team-b', to: 'team-c' } },
        });
      } finally {
        await before.close();
        await after.close();
      }
    }, 60_000);
  });
});
