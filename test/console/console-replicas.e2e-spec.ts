import { startGateway, type TestGateway } from '../support/gateway';
import { ADMIN_TOKEN, admin, eventually, pricedCatalog } from '../support/key-store';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../support/postgres';
import { AuditLog } from '../../src/audit/audit-log';
import { sessionOf, signOut, tokenSignIn } from '../support/console-session';

const SESSION_SECRET = 'console-replicas-secret-0123456789abcdef';

const keysWith = async (gw: TestGateway, cookie: string): Promise<number> => {
  const res = await fetch(`${gw.origin}/admin/v1/keys`, { headers: { cookie } });
  await res.text();
  return res.status;
};

describeWithPostgres('console sessions across two replicas (PostgreSQL)', () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  const env = (url: string, token = ADMIN_TOKEN): Record<string, string> => ({
    CATALOG_PATH: pricedCatalog('http://127.0.0.1:9'),
    GATEWAY_ADMIN_TOKEN: token,
    CONSOLE_SESSION_SECRET: SESSION_SECRET,
    KEY_STORE: 'database',
    DATABASE_URL: url,
    REDIS_URL: '',
    TRUST_PROXY: 'loopback',
    CONSOLE_SIGNIN_MAX_FAILURES: '3',
    CONSOLE_SIGNIN_LOCKOUT_SECONDS: '60',
  });

  beforeAll(async () => {
    db = await createTestDatabase('console_replicas');
    a = await startGateway(env(db.url));
    b = await startGateway(env(db.url));
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('refuses on replica B, within a second, a cookie signed out on replica A', async () => {
    const { cookie } = await tokenSignIn(a, ADMIN_TOKEN, '10.1.0.1');
    const session = await sessionOf(a, cookie!);
    // Trusted by B (and now cached there).
    expect(await keysWith(b, cookie!)).toBe(200);
    expect(await keysWith(b, cookie!)).toBe(200);
    expect(await signOut(a, cookie!, session.csrf!)).toBe(303);
    const { afterMs } = await eventually(
      async () => ((await keysWith(b, cookie!)) === 401 ? true : undefined),
      1000,
      'replica B to refuse the signed-out cookie',
    );
    expect(afterMs).toBeLessThan(1000);
    expect((await sessionOf(b, cookie!)).status).toBe(401);
  });

  it('ends on replica A a session an admin ended through replica B', async () => {
    const { cookie } = await tokenSignIn(a, ADMIN_TOKEN, '10.1.0.2');
    const { id } = await sessionOf(a, cookie!);
    expect(await keysWith(a, cookie!)).toBe(200);
    expect((await admin(b, 'POST', `/sessions/${id}/end`)).status).toBe(200);
    await eventually(
      async () => ((await keysWith(a, cookie!)) === 401 ? true : undefined),
      1000,
      'replica A to refuse the ended session',
    );
  });

  it('counts failed sign-ins of one address on every replica together', async () => {
    expect((await tokenSignIn(a, 'nope', '10.1.0.3')).status).toBe(401);
    expect((await tokenSignIn(b, 'nope', '10.1.0.3')).status).toBe(401);
    expect((await tokenSignIn(a, 'nope', '10.1.0.3')).status).toBe(401);
    const locked = await tokenSignIn(b, ADMIN_TOKEN, '10.1.0.3');
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(55);
  });

  it('ends the sessions of the old admin token when a replica starts with a new one', async () => {
    const { cookie } = await tokenSignIn(a, ADMIN_TOKEN, '10.1.0.4');
    expect(await keysWith(b, cookie!)).toBe(200);
    const rotated = await startGateway(env(db.url, 'a-brand-new-admin-token-0123456789'));
    try {
      await eventually(
        async () => ((await keysWith(b, cookie!)) === 401 ? true : undefined),
        1000,
        'the old token session to end',
      );
      await rotated.app.get(AuditLog).flush();
      const entries = await admin(
        rotated,
        'GET',
        '/audit?action=console.role_change',
        undefined,
        'a-brand-new-admin-token-0123456789',
      );
      expect(entries.body.data[0]).toMatchObject({
        actor: { kind: 'system', name: 'configuration' },
        change: { reason: 'grant_withdrawn', role: { from: 'admin', to: null } },
      });
    } finally {
      await rotated.close();
    }
  });
});
