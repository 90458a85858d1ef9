import { sql } from 'kysely';
import { ConsoleSessions, SESSION_COOKIE } from '../../src/console/console-session';
import type { SessionGrant } from '../../src/console/session-store';
import { DATABASE } from '../../src/db/db.module';
import type { OpenDatabase } from '../../src/db/database';
import type { TestGateway } from './gateway';

/** A live console session made the way a sign-in makes one, and its cookie header. */
export async function consoleSession(
  gw: TestGateway,
  who: Partial<SessionGrant> & Pick<SessionGrant, 'role' | 'team'>,
): Promise<{ id: string; cookie: string; csrf: string; value: string }> {
  const name = who.name ?? (who.team === null ? 'admin@example.com' : `${who.team}@example.com`);
  const { cookie, session } = await gw.app.get(ConsoleSessions).issue(
    {
      name,
      principal: `oidc:${name}`,
      via: 'oidc',
      grant: who.role === 'admin' ? 'test' : 'team',
      ...who,
    },
    '127.0.0.1',
  );
  return {
    id: session.id,
    cookie: `${SESSION_COOKIE}=${cookie}`,
    csrf: session.csrf,
    value: cookie,
  };
}

/** A `cookie` header signing in a member of `team`; `expired` ends its time at once. */
export async function memberCookie(
  gw: TestGateway,
  team: string,
  opts: { expired?: boolean } = {},
): Promise<string> {
  const s = await consoleSession(gw, { role: 'member', team });
  if (opts.expired === true) {
    const { db } = gw.app.get<OpenDatabase>(DATABASE);
    await sql`UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE id = ${s.id}`.execute(
      db,
    );
  }
  return s.cookie;
}

/** Signs in with a token from `ip`; the status, and the session cookie on success. */
export async function tokenSignIn(
  gw: TestGateway,
  token: string,
  ip: string,
): Promise<{ status: number; cookie?: string; retryAfter: string | null }> {
  const res = await fetch(`${gw.origin}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams({ token }).toString(),
  });
  await res.text();
  const set = res.headers.getSetCookie().find((c) => c.startsWith('gw_console='));
  return {
    status: res.status,
    cookie: set?.split(';')[0],
    retryAfter: res.headers.get('retry-after'),
  };
}

/** The session document a cookie opens: its status and CSRF token. */
export async function sessionOf(
  gw: TestGateway,
  cookie: string,
): Promise<{ status: number; csrf?: string; id?: string }> {
  const res = await fetch(`${gw.origin}/console/session.json`, { headers: { cookie } });
  const body = (await res.json()) as { csrf?: string; id?: string };
  return { status: res.status, csrf: body.csrf, id: body.id };
}

export async function signOut(gw: TestGateway, cookie: string, csrf: string): Promise<number> {
  const res = await fetch(`${gw.origin}/console/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf }).toString(),
  });
  await res.text();
  return res.status;
}
