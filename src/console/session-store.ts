import { createHash, randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { OpenDatabase } from '../db/database';
import type { ConsoleSessionsTable, Database } from '../db/schema';
import type { Selectable } from 'kysely';

/** Who is signed in to the console: an admin sees everything, a member only their team. */
export type ConsoleRole = 'admin' | 'member';

/** How long a console session lasts from sign-in, whatever its activity. */
export const SESSION_TTL_MS = 8 * 3_600_000;
/**
 * How long this replica trusts a session it has checked without asking again. Ending a
 * session NOTIFYs every replica, which forget what they trusted at once; this bound only
 * matters while the listener is down (and a resync then forgets everything anyway).
 */
const TRUST_MS = 30_000;
const CACHE_MAX = 10_000;
/** Sessions read per page when the configuration withdraws grants at boot. */
const WITHDRAW_PAGE = 500;
/** Ended and expired rows are kept this long for inspection, then deleted. */
const KEEP_ENDED_MS = 30 * 86_400_000;

/** Who a new session is for, and why they have their role. */
export interface SessionGrant {
  role: ConsoleRole;
  team: string | null;
  name: string;
  /** Stable identity: `token`, `link`, or `oidc:<sub>`. */
  principal: string;
  via: 'token' | 'link' | 'oidc';
  /** What granted the role (`token:<fingerprint>`, `email:<addr>`, `team`, ...). */
  grant: string;
}

/** A live session as the store knows it. */
export interface StoredSession extends SessionGrant {
  /** Public id (for the admin API and the audit log); the cookie's token is another value. */
  id: string;
  client: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** Why a session ended (kept in the table and the audit log). */
export type EndReason = 'signed_out' | 'ended_by_admin' | 'role_changed' | 'grant_withdrawn';

type LiveUpdate = UpdateQueryBuilder<
  Database,
  'console_sessions',
  'console_sessions',
  UpdateResult
>;

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

function fromRow(r: Selectable<ConsoleSessionsTable>): StoredSession {
  return {
    id: r.id,
    role: r.role,
    team: r.team,
    name: r.name,
    principal: r.principal,
    via: r.via as SessionGrant['via'],
    grant: r.grant_basis,
    client: r.client,
    createdAt: new Date(r.created_at),
    lastSeenAt: new Date(r.last_seen_at),
    expiresAt: new Date(r.expires_at),
  };
}

/**
 * Console sessions in the database, so that every replica agrees on which are live. A
 * replica remembers a checked session for a short while (TRUST_MS) to spare the database
 * a query per console call; ending sessions publishes on `gw_console`, and every replica
 * then forgets all it remembered, so an ended session is refused everywhere within the
 * notification's delay.
 */
export class SessionStore {
  private readonly logger = new Logger('ConsoleSessions');
  private readonly trusted = new Map<string, { session: StoredSession; until: number }>();
  /** Bumped by every invalidation: a check begun before one must not refill the cache. */
  private generation = 0;

  constructor(private readonly database: OpenDatabase) {
    database.events.subscribe('gw_console', () => this.forgetAll());
    database.events.onResync(() => this.forgetAll());
  }

  /** Creates a session; returns it and the token its cookie carries. */
  async create(
    who: SessionGrant,
    client: string | null,
  ): Promise<{ token: string; session: StoredSession }> {
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const row = await this.database.db
      .insertInto('console_sessions')
      .values({
        id: `cs_${randomBytes(12).toString('hex')}`,
        token_hash: hashOf(token),
        principal: who.principal,
        name: who.name,
        role: who.role,
        team: who.team,
        via: who.via,
        grant_basis: who.grant,
        client,
        created_at: now,
        last_seen_at: now,
        expires_at: new Date(now.getTime() + SESSION_TTL_MS),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { token, session: fromRow(row) };
  }

  /** The live session of a cookie token, or undefined (ended, expired, unknown). */
  async find(token: string): Promise<StoredSession | undefined> {
    const hash = hashOf(token);
    const now = Date.now();
    const hit = this.trusted.get(hash);
    if (hit !== undefined && hit.until > now && hit.session.expiresAt.getTime() > now) {
      return hit.session;
    }
    const generation = this.generation;
    // One round trip checks the session and notes the activity (at most every TRUST_MS).
    const row = await this.database.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql<Date>`now()` })
      .where('token_hash', '=', hash)
      .where('ended_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) {
      this.trusted.delete(hash);
      return undefined;
    }
    const session = fromRow(row);
    if (generation === this.generation) {
      if (this.trusted.size >= CACHE_MAX) {
        this.trusted.clear();
      }
      this.trusted.set(hash, { session, until: now + TRUST_MS });
    }
    return session;
  }

  /** Ends the session of a cookie token (sign-out); returns it when it was live. */
  async endByToken(token: string, reason: EndReason): Promise<StoredSession | undefined> {
    return (await this.end((q) => q.where('token_hash', '=', hashOf(token)), reason))[0];
  }

  /** Ends one session by its public id. */
  async endById(id: string, reason: EndReason): Promise<StoredSession | undefined> {
    return (await this.end((q) => q.where('id', '=', id), reason))[0];
  }

  /** Ends every live session of a principal (a user removed, or whose role changed). */
  endByPrincipal(
    principal: string,
    reason: EndReason,
    keep?: { role: ConsoleRole; team: string | null },
  ): Promise<StoredSession[]> {
    return this.end((q) => {
      let w = q.where('principal', '=', principal);
      if (keep !== undefined) {
        // Only the sessions whose role or team differs from `keep`.
        w = w.where((eb) =>
          eb.or([
            eb('role', '!=', keep.role),
            keep.team === null
              ? eb('team', 'is not', null)
              : eb('team', 'is distinct from', keep.team),
          ]),
        );
      }
      return w;
    }, reason);
  }

  /**
   * Ends the live sessions whose grant `stillHolds` rejects (the configuration changed):
   * every one of them, read a page at a time in id order (keyset), however many there are.
   */
  async endWithdrawn(stillHolds: (s: StoredSession) => boolean): Promise<StoredSession[]> {
    const ended: StoredSession[] = [];
    let after: string | undefined;
    for (;;) {
      let page = this.database.db
        .selectFrom('console_sessions')
        .selectAll()
        .where('ended_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`);
      if (after !== undefined) {
        page = page.where('id', '>', after);
      }
      const rows = await page.orderBy('id').limit(WITHDRAW_PAGE).execute();
      const ids = rows
        .map(fromRow)
        .filter((s) => !stillHolds(s))
        .map((s) => s.id);
      if (ids.length > 0) {
        ended.push(...(await this.end((q) => q.where('id', 'in', ids), 'grant_withdrawn')));
      }
      if (rows.length < WITHDRAW_PAGE) {
        return ended;
      }
      after = rows[rows.length - 1].id;
    }
  }

  /** Live sessions, most recently active first. */
  async list(): Promise<StoredSession[]> {
    const rows = await this.database.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('ended_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .orderBy('last_seen_at', 'desc')
      .limit(1000)
      .execute();
    return rows.map(fromRow);
  }

  /** Deletes rows that ended or expired long ago. */
  async prune(): Promise<void> {
    const before = new Date(Date.now() - KEEP_ENDED_MS);
    await this.database.db
      .deleteFrom('console_sessions')
      .where((eb) => eb.or([eb('expires_at', '<', before), eb('ended_at', '<', before)]))
      .execute();
  }

  private async end(
    where: (q: LiveUpdate) => LiveUpdate,
    reason: EndReason,
  ): Promise<StoredSession[]> {
    const live = this.database.db
      .updateTable('console_sessions')
      .where('ended_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`);
    const rows = await where(live)
      .set({ ended_at: sql<Date>`now()`, ended_reason: reason })
      .returningAll()
      .execute();
    if (rows.length > 0) {
      // This replica at once; the others when the notification arrives.
      this.forgetAll();
      await this.database.events.publish('gw_console', String(rows.length)).catch((err: Error) => {
        this.logger.error(`cannot tell other replicas that sessions ended: ${err.message}`);
      });
    }
    return rows.map(fromRow);
  }

  private forgetAll(): void {
    this.generation++;
    this.trusted.clear();
  }
}
