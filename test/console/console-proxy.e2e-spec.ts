import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { ConsoleSessions } from '../../src/console/console-session';
import { startGateway, testCatalog, type TestGateway } from '../support/gateway';
import { describeWithChromium, launchChromium } from './browser';
import { signIn, startProvider } from './oidc-helpers';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../support/postgres';

const SECRET = 'replicas-share-this-session-secret-0123456789';
const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'llm.example.com' };

/**
 * A load balancer in front of two replicas that keeps the Host header, as a real one
 * does. `route` picks the replica of each request; every pick is recorded.
 */
async function balancer(
  route: (path: string) => TestGateway,
): Promise<{ origin: string; served: [string, string][]; server: Server }> {
  const served: [string, string][] = [];
  const server = createServer((req, res) => {
    const target = new URL(route(req.url ?? '/').origin);
    served.push([req.url ?? '', target.port]);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    server,
  };
}

/** Where /oidc/start sends the browser, and what it sets. */
async function startLogin(
  gw: TestGateway,
  headers: Record<string, string> = {},
): Promise<{ authorize: URL; cookie: string }> {
  const res = await fetch(`${gw.origin}/console/oidc/start`, { headers, redirect: 'manual' });
  expect(res.status).toBe(302);
  return {
    authorize: new URL(res.headers.get('location') ?? ''),
    cookie: res.headers.get('set-cookie') ?? '',
  };
}

describeWithChromium('console sign-in across replicas and behind a proxy', () => {
  // Replicas share their database (console sessions live there), as in a deployment.
  describeWithPostgres('on one PostgreSQL', () => proxySuite());
});

function proxySuite(): void {
  let db: TestDatabase;
  let provider: Awaited<ReturnType<typeof startProvider>>;
  let browser: Browser;
  const gateways: TestGateway[] = [];
  let lb: Awaited<ReturnType<typeof balancer>>;
  /** Replica A starts sign-ins; the callback goes to `callbackTo`. */
  let a: TestGateway;
  let b: TestGateway;
  let stranger: TestGateway;
  let callbackTo: TestGateway;

  const boot = async (env: Record<string, string>): Promise<TestGateway> => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      REDIS_URL: '',
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: 'gateway-console',
      CONSOLE_OIDC_CLIENT_SECRET: 'gateway-console-secret',
      ...env,
    });
    gateways.push(gw);
    return gw;
  };

  beforeAll(async () => {
    [provider, browser, db] = await Promise.all([
      startProvider(),
      launchChromium(),
      createTestDatabase('console_proxy'),
    ]);
    const store = { KEY_STORE: 'database', DATABASE_URL: db.url };
    a = await boot({ CONSOLE_SESSION_SECRET: SECRET, ...store });
    b = await boot({ CONSOLE_SESSION_SECRET: SECRET, ...store });
    stranger = await boot({ CONSOLE_SESSION_SECRET: `${SECRET}-not-the-same` });
    lb = await balancer((path) => (path.startsWith('/console/oidc/callback') ? callbackTo : a));
    await provider.ready(`${lb.origin}/console/oidc/callback`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(gateways.map((g) => g.close()));
    lb?.server.close();
    provider?.child.kill();
    await db?.drop();
  });

  it('completes a sign-in started on one replica when the callback lands on another', async () => {
    callbackTo = b;
    lb.served.length = 0;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, lb.origin, 'bob');
      await page.waitForSelector('#who:text("bob@example.com · team-b")');
      const port = (gw: TestGateway): string => new URL(gw.origin).port;
      const starts = lb.served.filter(([p]) => p.startsWith('/console/oidc/start'));
      const callbacks = lb.served.filter(([p]) => p.startsWith('/console/oidc/callback'));
      expect(starts.map(([, p]) => p)).toEqual([port(a)]);
      expect(callbacks.map(([, p]) => p)).toEqual([port(b)]);
    } finally {
      await context.close();
    }
  }, 45_000);

  it('refuses the callback on a replica with another session secret', async () => {
    callbackTo = stranger;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, lb.origin, 'bob');
      await page.waitForSelector('text=This sign-in expired or was started elsewhere');
      expect((await page.request.get(`${lb.origin}/console/session.json`)).status()).toBe(401);
    } finally {
      await context.close();
    }
  }, 45_000);

  it('keeps the sign-in state in an encrypted, HttpOnly, SameSite=Lax cookie of the callback path', async () => {
    const { authorize, cookie } = await startLogin(a);
    expect(cookie).toMatch(/^gw_console_login=[\w-]+; Max-Age=600; Path=\/console\/oidc; /);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    const value = /^gw_console_login=([\w-]+)/.exec(cookie)?.[1] ?? '';
    const raw = Buffer.from(value, 'base64url').toString('latin1');
    for (const param of ['state', 'nonce']) {
      const secret = authorize.searchParams.get(param) ?? '';
      expect(secret.length).toBeGreaterThan(20);
      expect(value).not.toContain(secret);
      expect(raw).not.toContain(secret);
    }
  });

  describe('behind a TLS-terminating proxy', () => {
    let plain: TestGateway;
    let trusting: TestGateway;
    let pinned: TestGateway;

    beforeAll(async () => {
      // Each signs in on its own, so each has a database of its own.
      const own = { KEY_STORE: 'database', DATA_DIR: 'memory://' };
      plain = await boot(own);
      trusting = await boot({ TRUST_PROXY: 'loopback', ...own });
      pinned = await boot({ CONSOLE_PUBLIC_URL: 'https://console.example.org' });
    }, 120_000);

    /** The session cookie the one-time sign-in link sets. */
    const sessionCookie = async (
      gw: TestGateway,
      headers: Record<string, string>,
    ): Promise<string> => {
      const link = gw.app.get(ConsoleSessions).oneTimeLink(gw.origin) ?? '';
      const res = await fetch(link, { headers, redirect: 'manual' });
      expect(res.status).toBe(303);
      return res.headers.getSetCookie().join('\n');
    };

    it('ignores X-Forwarded-* unless TRUST_PROXY trusts the peer', async () => {
      const session = await sessionCookie(plain, FORWARDED);
      expect(session).toMatch(/^gw_console=/m);
      expect(session).not.toMatch(/; secure/i);
      const { authorize, cookie } = await startLogin(plain, FORWARDED);
      expect(authorize.searchParams.get('redirect_uri')).toBe(
        `${plain.origin}/console/oidc/callback`,
      );
      expect(cookie).not.toMatch(/; secure/i);
    });

    it('with TRUST_PROXY, marks cookies Secure and builds the redirect URI from the forwarded scheme and host', async () => {
      const session = await sessionCookie(trusting, FORWARDED);
      expect(session).toMatch(/^gw_console=[^\n]*; secure/im);
      const { authorize, cookie } = await startLogin(trusting, FORWARDED);
      expect(authorize.searchParams.get('redirect_uri')).toBe(
        'https://llm.example.com/console/oidc/callback',
      );
      expect(cookie).toMatch(/; Secure/);
      // Without the headers, the same gateway answers for what it sees.
      const direct = await startLogin(trusting);
      expect(direct.authorize.searchParams.get('redirect_uri')).toBe(
        `${trusting.origin}/console/oidc/callback`,
      );
    });

    it('uses CONSOLE_PUBLIC_URL for the redirect URI, whatever the request says', async () => {
      const variants: Record<string, string>[] = [
        {},
        FORWARDED,
        { 'x-forwarded-host': 'evil.example' },
      ];
      for (const headers of variants) {
        const { authorize } = await startLogin(pinned, headers);
        expect(authorize.searchParams.get('redirect_uri')).toBe(
          'https://console.example.org/console/oidc/callback',
        );
      }
    });
  });
}
