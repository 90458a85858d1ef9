import { sql } from 'kysely';
import { AuditLog } from '../../src/audit/audit-log';
import { MetricsService } from '../../src/observability/metrics/metrics.service';
import { DATABASE } from '../../src/db/db.module';
import type { OpenDatabase } from '../../src/db/database';
import { SessionStore } from '../../src/console/session-store';
import { consoleSession, sessionOf, signOut, tokenSignIn } from '../support/console-session';
import { ADMIN_TOKEN, admin, createKey, gatewayOnStore } from '../support/key-store';
import { describeOnEachStore, type StoreBackend } from '../support/postgres';
import type { TestGateway } from '../support/gateway';

const SESSION_SECRET = 'console-sessions-secret-0123456789abcdef';
/** Three failures lock an address out for 1 s, then 2 s, capped at 4 s. */
const THROTTLE = {
  CONSOLE_SIGNIN_MAX_FAILURES: '3',
  CONSOLE_SIGNIN_LOCKOUT_SECONDS: '1',
  CONSOLE_SIGNIN_LOCKOUT_MAX_SECONDS: '4',
  // Each test signs in from an address of its own (X-Forwarded-For from loopback).
  TRUST_PROXY: 'loopback',
};

const keysWith = async (gw: TestGateway, cookie: string): Promise<number> => {
  const res = await fetch(`${gw.origin}/admin/v1/keys`, { headers: { cookie } });
  await res.text();
  return res.status;
};

async function auditEntries(gw: TestGateway, query: string): Promise<any[]> {
  await gw.app.get(AuditLog).flush();
  const res = await admin(gw, 'GET', `/audit?limit=500&${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

function suite(backend: () => Promise<StoreBackend>): void {
  const store = gatewayOnStore(backend, { CONSOLE_SESSION_SECRET: SESSION_SECRET, ...THROTTLE });

  it('ends a session at sign-out: the old cookie no longer lists keys nor opens the console', async () => {
    const { status, cookie } = await tokenSignIn(store.gw, ADMIN_TOKEN, '10.0.0.1');
    expect(status).toBe(303);
    const session = await sessionOf(store.gw, cookie!);
    expect(session.status).toBe(200);
    expect(await keysWith(store.gw, cookie!)).toBe(200);

    expect(await signOut(store.gw, cookie!, session.csrf!)).toBe(303);
    expect(await keysWith(store.gw, cookie!)).toBe(401);
    expect((await sessionOf(store.gw, cookie!)).status).toBe(401);
    const create = await fetch(`${store.gw.origin}/admin/v1/keys`, {
      method: 'POST',
      headers: {
        cookie: cookie!,
        'x-csrf-token': session.csrf!,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'after-sign-out' }),
    });
    expect(create.status).toBe(401);

    const entries = await auditEntries(store.gw, `target=${session.id}`);
    expect(entries.map((e) => e.action)).toEqual(['console.sign_out', 'console.sign_in']);
    expect(entries[1]).toMatchObject({
      actor: { kind: 'session', id: 'token', name: 'admin token' },
      client: '10.0.0.1',
      outcome: 'success',
    });
  });

  it('locks an address out after repeated failures, for twice as long each time, and a success resets it', async () => {
    const ip = '10.0.0.2';
    for (let i = 0; i < 3; i++) {
      expect((await tokenSignIn(store.gw, 'wrong-token', ip)).status).toBe(401);
    }
    const locked = await tokenSignIn(store.gw, ADMIN_TOKEN, ip);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBe(1);
    // Another address is not affected.
    expect((await tokenSignIn(store.gw, ADMIN_TOKEN, '10.0.0.3')).status).toBe(303);

    await new Promise((r) => setTimeout(r, 1100));
    expect((await tokenSignIn(store.gw, 'wrong-again', ip)).status).toBe(401);
    const longer = await tokenSignIn(store.gw, ADMIN_TOKEN, ip);
    expect(longer.status).toBe(429);
    expect(Number(longer.retryAfter)).toBe(2);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await tokenSignIn(store.gw, ADMIN_TOKEN, ip)).status).toBe(303);
    // Forgotten: the next mistake is an ordinary 401, not a lockout.
    expect((await tokenSignIn(store.gw, 'wrong-token', ip)).status).toBe(401);
    expect((await tokenSignIn(store.gw, 'wrong-token', ip)).status).toBe(401);

    const failed = await auditEntries(store.gw, `action=console.sign_in_failed`);
    const mine = failed.filter((e) => e.client === ip);
    expect(mine.length).toBe(6);
    expect(mine[0]).toMatchObject({ actor: { kind: 'anonymous' }, outcome: 'failure' });
    expect(JSON.stringify(failed)).not.toContain('wrong-token');
  }, 20_000);

  it('counts a burst of parallel guesses: no more than the allowed number get checked', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => tokenSignIn(store.gw, 'guess', '10.0.0.4')),
    );
    expect(statuses.filter((s) => s.status === 401).length).toBe(3);
    expect(statuses.filter((s) => s.status === 429).length).toBe(9);
  });

  it('lets an admin list sessions and end all of a person, at once', async () => {
    const carol = await consoleSession(store.gw, {
      role: 'member',
      team: 'team-c',
      name: 'carol@example.com',
    });
    const again = await consoleSession(store.gw, {
      role: 'member',
      team: 'team-c',
      name: 'carol@example.com',
    });
    expect(await keysWith(store.gw, carol.cookie)).toBe(200);
    const listed = await admin(store.gw, 'GET', '/sessions');
    expect(listed.status).toBe(200);
    const ids = listed.body.data.map((s: any) => s.id);
    expect(ids).toEqual(expect.arrayContaining([carol.id, again.id]));
    expect(JSON.stringify(listed.body)).not.toContain(carol.value);
    // A member may not.
    const asMember = await fetch(`${store.gw.origin}/admin/v1/sessions`, {
      headers: { cookie: carol.cookie },
    });
    expect(asMember.status).toBe(403);

    const ended = await admin(store.gw, 'POST', '/sessions/end', {
      principal: 'oidc:carol@example.com',
    });
    expect(ended.status).toBe(200);
    expect(ended.body.data.map((s: any) => s.id).sort()).toEqual([carol.id, again.id].sort());
    expect(await keysWith(store.gw, carol.cookie)).toBe(401);
    expect(await keysWith(store.gw, again.cookie)).toBe(401);
    const entries = await auditEntries(store.gw, 'action=console.session_end');
    expect(entries.filter((e) => e.team === 'team-c').length).toBe(2);
    expect(entries[0].actor).toEqual({ kind: 'admin_token', id: 'token', name: 'admin token' });
  });

  it('ends every session whose grant the configuration withdrew, past any page size', async () => {
    const database = store.gw.app.get<OpenDatabase>(DATABASE);
    const withdrawn = 1200;
    await sql`
      INSERT INTO console_sessions (id, token_hash, principal, name, role, team, via, grant_basis,
        client, created_at, last_seen_at, expires_at)
      SELECT 'cs_w' || lpad(n::text, 5, '0'), 'w' || n, 'oidc:w' || n, 'w', 'admin', NULL,
        'oidc', CASE WHEN n % 7 = 0 THEN 'kept' ELSE 'withdrawn' END, NULL,
        now(), now() - (n || ' seconds')::interval, now() + interval '1 hour'
      FROM generate_series(1, ${withdrawn + Math.floor(withdrawn / 6)}) AS n`.execute(database.db);
    const ended = await new SessionStore(database).endWithdrawn((s) => s.grant !== 'withdrawn');
    const left = await sql<{ grant_basis: string; n: string | number }>`
      SELECT grant_basis, count(*) AS n FROM console_sessions
      WHERE id LIKE 'cs_w%' AND ended_at IS NULL GROUP BY grant_basis`.execute(database.db);
    const kept = Math.floor((withdrawn + Math.floor(withdrawn / 6)) / 7);
    expect(ended.length).toBe(withdrawn + Math.floor(withdrawn / 6) - kept);
    expect(ended.length).toBeGreaterThan(1000);
    expect(ended.every((s) => s.grant === 'withdrawn')).toBe(true);
    expect(left.rows.map((r) => [r.grant_basis, Number(r.n)])).toEqual([['kept', kept]]);
    // The kept ones are no one's: out of the way of the tests after this one.
    await sql`UPDATE console_sessions SET ended_at = now(), ended_reason = 'ended_by_admin'
      WHERE id LIKE 'cs_w%' AND ended_at IS NULL`.execute(database.db);
  });

  it('records key create, update (budget before and after), rotate and revoke, never a secret', async () => {
    const { id, key } = await createKey(store.gw, {
      name: 'audited',
      owner: 'team-audit',
      budget: { amount_usd: 5, period: 'month' },
      metadata: { note: 'plain', leaked: 'gw-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    expect(
      (
        await admin(store.gw, 'PATCH', `/keys/${id}`, {
          budget: { amount_usd: 7, period: 'day' },
          models: ['local-echo-gpt'],
        })
      ).status,
    ).toBe(200);
    const rotated = await admin(store.gw, 'POST', `/keys/${id}/rotate`, {
      grace_period_seconds: 60,
    });
    expect(rotated.status).toBe(200);
    expect((await admin(store.gw, 'POST', `/keys/${id}/revoke`, { reason: 'done' })).status).toBe(
      200,
    );

    const entries = await auditEntries(store.gw, `target=${id}`);
    expect(entries.map((e) => e.action)).toEqual([
      'key.revoke',
      'key.rotate',
      'key.update',
      'key.create',
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({
        actor: { kind: 'admin_token' },
        team: 'team-audit',
        target: { kind: 'api_key', id },
        client: '127.0.0.1',
      });
    }
    const update = entries[2].change;
    expect(update.budget).toEqual({
      from: { amount_usd: 5, period: 'month' },
      to: { amount_usd: 7, period: 'day' },
    });
    expect(update.models).toEqual({ from: null, to: ['local-echo-gpt'] });
    expect(Object.keys(update).sort()).toEqual(['budget', 'models']);
    expect(entries[0].change.revoked_reason).toEqual({ from: null, to: 'done' });
    expect(entries[1].change.grace_period_seconds).toBe(60);
    expect(entries[3].change.metadata.to).toEqual({ note: 'plain', leaked: '[redacted]' });

    const everything = JSON.stringify(await auditEntries(store.gw, ''));
    for (const secret of [key, rotated.body.key, ADMIN_TOKEN, SESSION_SECRET]) {
      expect(everything).not.toContain(secret);
    }
    const exported = await fetch(`${store.gw.origin}/admin/v1/audit/export?format=jsonl`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    const text = await exported.text();
    expect(text).not.toContain(key);
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(JSON.parse(everything).map((e: any) => e.id));
  });

  it('filters by action, domain, actor, team and time, and shows a member only their team', async () => {
    const log = store.gw.app.get(AuditLog);
    const at = new Date('2030-01-02T03:04:05.000Z');
    log.record({
      action: 'team.budget_update',
      actor: { kind: 'session', id: 'oidc:x', name: 'x@example.com' },
      team: 'team-f',
      target: { kind: 'team', id: 'team-f' },
      change: { budget: { from: 1, to: 2 } },
      at,
    });
    log.record({
      action: 'key.update',
      actor: { kind: 'session', id: 'oidc:y', name: 'y@example.com' },
      team: 'team-g',
      at,
    });
    const byAction = await auditEntries(store.gw, 'action=team.budget_update');
    expect(byAction.map((e) => e.team)).toEqual(['team-f']);
    expect((await auditEntries(store.gw, 'action=team.')).length).toBe(1);
    expect((await auditEntries(store.gw, 'actor=y@example.com')).map((e) => e.action)).toEqual([
      'key.update',
    ]);
    expect((await auditEntries(store.gw, 'actor=oidc:x')).length).toBe(1);
    const window = await auditEntries(
      store.gw,
      'from=2030-01-02T03:04:05Z&to=2030-01-02T03:04:06Z',
    );
    expect(window.length).toBe(2);
    expect(
      (await auditEntries(store.gw, 'to=2030-01-02T03:04:05Z')).every(
        (e) => e.at < at.toISOString(),
      ),
    ).toBe(true);
    expect((await admin(store.gw, 'GET', '/audit?outcome=maybe')).status).toBe(400);
    const cursor = (text: string): string => Buffer.from(text).toString('base64url');
    // A cursor the database would refuse (an id past int8, none at all) is a 400, never a 500.
    for (const after of [
      'bogus',
      cursor('1767225600000.9999999999999999999'),
      cursor('1.0'),
      cursor('01.5'),
    ]) {
      const res = await admin(store.gw, 'GET', `/audit?after=${after}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'after', code: 'invalid_cursor' });
    }

    const member = await consoleSession(store.gw, { role: 'member', team: 'team-g' });
    const mine = await fetch(`${store.gw.origin}/admin/v1/audit`, {
      headers: { cookie: member.cookie },
    });
    const body = (await mine.json()) as { data: any[] };
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((e) => e.team === 'team-g')).toBe(true);
    const other = await fetch(`${store.gw.origin}/admin/v1/audit?team=team-f`, {
      headers: { cookie: member.cookie },
    });
    expect(other.status).toBe(403);
  });

  it('pages thousands of entries newest first, each exactly once, while more arrive', async () => {
    const log = store.gw.app.get(AuditLog);
    const base = Date.parse('2031-05-01T00:00:00Z');
    // Many share a millisecond: the id breaks the tie.
    for (let i = 0; i < 2500; i++) {
      log.record({
        action: 'test.page',
        actor: { kind: 'system' },
        target: { kind: 'n', id: String(i) },
        at: new Date(base + Math.floor(i / 7)),
      });
    }
    await log.flush();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await admin(
        store.gw,
        'GET',
        `/audit?action=test.page&limit=300${cursor === null ? '' : `&after=${cursor}`}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: any) => e.target.id));
      cursor = res.body.next_cursor;
      pages++;
      if (pages === 2) {
        // Newer entries mid-way do not shift the pages still to come.
        log.record({
          action: 'test.page',
          actor: { kind: 'system' },
          target: { kind: 'n', id: 'late' },
          at: new Date(base + 10_000),
        });
        await log.flush();
      }
    } while (cursor !== null);
    expect(pages).toBe(9);
    expect(seen.length).toBe(2500);
    expect(new Set(seen).size).toBe(2500);
    // Newest first: within a millisecond, the later insert first.
    expect(seen.slice(0, 3)).toEqual(['2499', '2498', '2497']);
    expect(seen[2499]).toBe('0');

    const csv = await fetch(`${store.gw.origin}/admin/v1/audit/export?action=test.page`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="audit-.*\.csv"/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'id,at,actor_kind,actor_id,actor_name,client,action,target_kind,target_id,team,outcome,change',
    );
    expect(lines.length).toBe(2502);
  }, 60_000);

  it('logs and counts a failed audit write, keeps the entry, and writes it once the table is back', async () => {
    const { db } = store.gw.app.get<OpenDatabase>(DATABASE);
    const log = store.gw.app.get(AuditLog);
    await log.flush();
    await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(db);
    try {
      log.record({ action: 'test.retry', actor: { kind: 'system' } });
      await log.flush();
      expect(
        store.gw.logs.some(
          (l) =>
            typeof l.msg === 'string' && l.msg.includes('audit log write failed for 1 entries'),
        ),
      ).toBe(true);
      const metrics = await store.gw.app.get(MetricsService).scrape();
      expect(metrics).toMatch(/^gateway_audit_entries_total\{state="failed"\} [1-9]/m);
    } finally {
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(db);
    }
    await log.flush();
    expect((await auditEntries(store.gw, 'action=test.retry')).length).toBe(1);
    expect(await store.gw.app.get(MetricsService).scrape()).toMatch(
      /^gateway_audit_entries_total\{state="dropped"\} 0$/m,
    );
  });

  it('keeps the table append-only in the database; only the retention sweep deletes, and only old entries', async () => {
    const { db } = store.gw.app.get<OpenDatabase>(DATABASE);
    await expect(sql`UPDATE audit_log SET action = 'forged'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`DELETE FROM audit_log`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`TRUNCATE audit_log`.execute(db)).rejects.toThrow(/append-only/);
    const log = store.gw.app.get(AuditLog);
    const old = new Date(Date.now() - 400 * 86_400_000);
    log.record({ action: 'test.old', actor: { kind: 'system' }, at: old });
    log.record({
      action: 'test.recent',
      actor: { kind: 'system' },
      at: new Date(Date.now() - 300 * 86_400_000),
    });
    await log.flush();
    expect(await log.sweep()).toBe(1);
    expect((await auditEntries(store.gw, 'action=test.old')).length).toBe(0);
    expect((await auditEntries(store.gw, 'action=test.recent')).length).toBe(1);
  });
}

describeOnEachStore('console sessions, sign-in throttling and the audit log', 'sessions', suite);
