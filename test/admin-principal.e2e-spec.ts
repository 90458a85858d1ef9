import { AdminAuth } from '../src/console/admin-auth';
import { ConsoleSessions } from '../src/console/console-session';
import { memberCookie } from './support/console-session';
import { startGateway, testCatalog, type TestGateway } from './support/gateway';
import { ADMIN_TOKEN } from './support/key-store';
import { freshDataDir } from './support/pglite';

const SESSION_SECRET = 'admin-principal-session-secret-0123456789';

describe('the admin caller is resolved once per admin request', () => {
  let gw: TestGateway;
  let tokenChecks: jest.SpiedFunction<AdminAuth['acceptsToken']>;
  let sessionReads: jest.SpiedFunction<ConsoleSessions['read']>;

  beforeAll(async () => {
    gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      CONSOLE_SESSION_SECRET: SESSION_SECRET,
      KEY_STORE: 'database',
      DATA_DIR: freshDataDir(),
      REDIS_URL: '',
    });
    // Count the real checks: the token digest comparison and the session cookie's validation.
    tokenChecks = jest.spyOn(gw.app.get(AdminAuth), 'acceptsToken');
    sessionReads = jest.spyOn(gw.app.get(ConsoleSessions), 'read');
  }, 60_000);
  afterAll(() => gw.close());

  beforeEach(() => {
    tokenChecks.mockClear();
    sessionReads.mockClear();
  });

  const call = (method: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${gw.origin}/admin/v1/keys`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('checks the admin token once for a read and once for a write with a body', async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    expect((await call('GET', auth)).status).toBe(200);
    expect(tokenChecks).toHaveBeenCalledTimes(1);
    tokenChecks.mockClear();
    expect((await call('POST', auth, { name: 'once' })).status).toBe(201);
    expect(tokenChecks).toHaveBeenCalledTimes(1);
  });

  it('reads a console session once, and still refuses a write without its CSRF token', async () => {
    const cookie = { cookie: await memberCookie(gw, 'team-a') };
    expect((await call('GET', cookie)).status).toBe(200);
    expect(sessionReads).toHaveBeenCalledTimes(1);
    sessionReads.mockClear();
    const refused = await call('POST', cookie, { name: 'no-csrf' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'csrf_token_invalid' } });
    expect(sessionReads).toHaveBeenCalledTimes(1);
  });

  it('answers a caller with a wrong token 401 after one check', async () => {
    const res = await call('GET', { authorization: 'Bearer not-the-admin-token' });
    expect(res.status).toBe(401);
    expect(tokenChecks).toHaveBeenCalledTimes(1);
  });
});
