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
