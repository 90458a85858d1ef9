import pino from 'pino';
import { Writable } from 'node:stream';
import { ConsoleSessions } from '../../src/console/console-session';
import { announceConsole } from '../../src/console/console.module';
import { startGateway, testCatalog, TEST_KEY, type TestGateway } from '../support/gateway';
import { freshDataDir } from '../support/pglite';

const store = (): Record<string, string> => ({
  KEY_STORE: 'database',
  DATA_DIR: freshDataDir(),
  REDIS_URL: '',
});

function cookiesOf(res: Response): string[] {
  return res.headers.getSetCookie();
}

describe('console sign-in without an admin token', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({ CATALOG_PATH: testCatalog('http://127.0.0.1:9'), ...store() });
  }, 60_000);
  afterAll(() => gw.close());

  it('logs the console address and a one-time link that signs in once, with a strict cookie', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    announceConsole(gw.app.get(ConsoleSessions), gw.origin, pino(sink));
    const log = lines.join('');
    expect(log).toContain(`console at ${gw.origin}/console`);
    const link = /(http:\/\/\S+\/console\/login\?token=[\w-]+)/.exec(log)?.[1] ?? '';
    expect(link).not.toBe('');

    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/console/');
    const cookies = cookiesOf(first);
    // One cookie: the sealed session token (the session itself is in the database).
    expect(cookies.length).toBe(1);
    for (const c of cookies) {
      expect(c).toMatch(/httponly/i);
      expect(c).toMatch(/samesite=strict/i);
      // Plain HTTP here: Secure would make the browser drop the cookie.
      expect(c).not.toMatch(/secure/i);
    }
    const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
    const session = (await (
      await fetch(`${gw.origin}/console/session.json`, { headers: { cookie } })
    ).json()) as {
      role: string;
    };
    expect(session.role).toBe('admin');
    const keys = await fetch(`${gw.origin}/admin/v1/keys`, { headers: { cookie } });
    expect(keys.status).toBe(200);

    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
    expect(cookiesOf(again)).toEqual([]);
  });

  it('lets a signed-out admin back in: a new link is printed to the log on request, and the old one stays dead', async () => {
    const oldLink = gw.app.get(ConsoleSessions).oneTimeLink(gw.origin) ?? '';
    const page = await (await fetch(`${gw.origin}/console/login`)).text();
    expect(page).toContain('action="/console/login/link"');
    const asked = await fetch(`${gw.origin}/console/login/link`, { method: 'POST' });
    expect(asked.status).toBe(200);
    expect(await asked.text()).toContain('new one-time sign-in link is in the gateway log');
    const printed = gw.logs
      .map((l) => (typeof l.msg === 'string' ? l.msg : ''))
      .map((m) => /(http:\/\/\S+\/console\/login\?token=[\w-]+)/.exec(m)?.[1])
      .filter((m): m is string => m !== undefined);
    const link = printed[printed.length - 1];
    expect(link).toBeDefined();
    expect(link).not.toBe(oldLink);
    // The link goes to the log only, never to the browser.
    expect(gw.rawLogs.join('')).toContain(link);

    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const cookie = cookiesOf(first)[0].split(';')[0];
    const session = (await (
      await fetch(`${gw.origin}/console/session.json`, { headers: { cookie } })
    ).json()) as { csrf: string };
    const out = await fetch(`${gw.origin}/console/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${session.csrf}`,
    });
    expect(out.status).toBe(303);
    expect((await fetch(`${gw.origin}/admin/v1/keys`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
  });

  it('keeps the admin API invisible (404) to a caller without a session, and the page behind sign-in', async () => {
    expect((await fetch(`${gw.origin}/admin/v1/keys`)).status).toBe(404);
    const page = await fetch(`${gw.origin}/console/`, { redirect: 'manual' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/console/login');
    const login = await fetch(`${gw.origin}/console/login`);
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await login.text()).toContain('one-time sign-in link');
  });

  it('leaves the generation endpoints without console headers or cookies', async () => {
    const res = await fetch(`${gw.baseURL}/models`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(cookiesOf(res)).toEqual([]);
  });
});

describe('console switched off', () => {
  it('serves nothing at the console path when CONSOLE_ENABLED=false', async () => {
    const gw = await startGateway({
      CONSOLE_ENABLED: 'false',
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
    });
    try {
      expect((await fetch(`${gw.origin}/console/login`)).status).toBe(404);
    } finally {
      await gw.close();
    }
  });

  it('serves it at CONSOLE_PATH when set', async () => {
    const gw = await startGateway({
      CONSOLE_PATH: '/ops/console',
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
    });
    try {
      expect((await fetch(`${gw.origin}/ops/console/login`)).status).toBe(200);
      expect((await fetch(`${gw.origin}/console/login`)).status).toBe(404);
    } finally {
      await gw.close();
    }
  });
});
