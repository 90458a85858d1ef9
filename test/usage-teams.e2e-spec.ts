import { sql } from 'kysely';
import OpenAI from 'openai';
import { DATABASE } from '../src/db/db.module';
import type { OpenDatabase } from '../src/db/database';
import { memberCookie } from './support/console-session';
import { admin, createKey, eventually, gatewayOnStore } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

const SESSION_SECRET = 'usage-teams-session-secret-0123456789';
const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };

/** Team usage, team filters and spend per budget period, on each database the store runs on. */
function teamSuite(env: () => Promise<StoreBackend>) {
  const store = gatewayOnStore(env, { CONSOLE_SESSION_SECRET: SESSION_SECRET });

  const call = (key: string): Promise<unknown> =>
    new OpenAI({ baseURL: store.gw.baseURL, apiKey: key, maxRetries: 0 }).chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Hi' }],
    });
  const asMember = async (team: string, path: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${store.gw.origin}/admin/v1${path}`, {
      headers: { cookie: await memberCookie(store.gw, team) },
    });
    return { status: res.status, body: await res.json() };
  };

  it('shows a member the usage of every key of their team, revoked ones too, and keeps past spend with the team that made it', async () => {
    const a1 = await createKey(store.gw, { name: 'x-one', owner: 'team-x' });
    const a2 = await createKey(store.gw, { name: 'x-two', owner: 'team-x' });
    const b1 = await createKey(store.gw, { name: 'y-one', owner: 'team-y' });
    await Promise.all([call(a1.key), call(a2.key), call(b1.key)]);
    await eventually(
      async () => {
        const res = await admin(store.gw, 'GET', '/usage');
        return res.body.totals.requests >= 3 ? true : undefined;
      },
      5000,
      'three ledger rows',
    );
    expect((await admin(store.gw, 'POST', `/keys/${a2.id}/revoke`)).status).toBe(200);
    // The key moves to another team: what it spent before stays with team-x.
    expect((await admin(store.gw, 'PATCH', `/keys/${a1.id}`, { owner: 'team-y' })).status).toBe(
      200,
    );

    const mine = await asMember('team-x', '/usage?group_by=key');
    expect(mine.status).toBe(200);
    expect(mine.body.totals.requests).toBe(2);
    expect(mine.body.data.map((r: any) => r.key_id).sort()).toEqual([a1.id, a2.id].sort());
    const rows = await asMember('team-x', '/usage/requests');
    expect(rows.body.data.map((r: any) => [r.key_id, r.team]).sort()).toEqual(
      [
        [a1.id, 'team-x'],
        [a2.id, 'team-x'],
      ].sort(),
    );
    // Asking for another team's figures, or naming its key, shows nothing of it.
    expect((await asMember('team-x', '/usage?team=team-y')).status).toBe(403);
    expect((await asMember('team-x', `/usage?key_id=${b1.id}`)).body.totals.requests).toBe(0);
    expect((await asMember('team-y', '/usage')).body.totals.requests).toBe(1);

    const byTeam = await admin(store.gw, 'GET', '/usage?group_by=team');
    expect(byTeam.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ team: 'team-x', requests: 2 }),
        expect.objectContaining({ team: 'team-y', requests: 1 }),
      ]),
    );
    expect((await admin(store.gw, 'GET', '/usage?team=team-x')).body.totals.requests).toBe(2);
    expect((await admin(store.gw, 'GET', '/usage?team=x&team=y')).status).toBe(400);
  });

  it('refuses a session past its expiry, though its cookie is well sealed', async () => {
    const fresh = await fetch(`${store.gw.origin}/admin/v1/keys`, {
      headers: { cookie: await memberCookie(store.gw, 'team-x') },
    });
    expect(fresh.status).toBe(200);
    const stale = await fetch(`${store.gw.origin}/admin/v1/keys`, {
      headers: { cookie: await memberCookie(store.gw, 'team-x', { expired: true }) },
    });
    expect(stale.status).not.toBe(200);
    await stale.body?.cancel();
    await fresh.body?.cancel();
  });

  it("shows each key's spend for its own budget period, as the budget counts it", async () => {
    const { id } = await createKey(store.gw, {
      name: 'period-key',
      owner: 'team-z',
      budget: { amount_usd: 5, period: 'day' },
    });
    // $1 today and $2 long ago, straight into the daily totals the budget reads.
    const { db } = store.gw.app.get<OpenDatabase>(DATABASE);
    const today = new Date().toISOString().slice(0, 10);
    for (const [day, pico] of [
      [today, 1_000_000_000_000n],
      ['2001-02-03', 2_000_000_000_000n],
    ] as const) {
      await sql`
        INSERT INTO usage_daily (key_id, day, model, requests, errors, input_tokens,
          cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_pusd,
          protection_cost_pusd)
        VALUES (${id}, ${day}::date, 'test-gpt', 1, 0, 0, 0, 0, 0, 0, ${pico.toString()}::bigint, 0)`.execute(
        db,
      );
    }
    const spendOf = async (): Promise<any> =>
      (await admin(store.gw, 'GET', '/keys?owner=team-z')).body.data[0].spend;
    const midnight = `${today}T00:00:00.000Z`;
    expect(await spendOf()).toMatchObject({ period: 'day', spent_usd: 1, since: midnight });
    await admin(store.gw, 'PATCH', `/keys/${id}`, { budget: { amount_usd: 5, period: 'total' } });
    expect(await spendOf()).toMatchObject({ period: 'total', spent_usd: 3, resets_at: null });
    await admin(store.gw, 'PATCH', `/keys/${id}`, { budget: null });
    // No budget: the calendar month.
    expect(await spendOf()).toMatchObject({ period: 'month', spent_usd: 1 });
    expect((await admin(store.gw, 'GET', `/keys/${id}`)).body.spend.spent_usd).toBe(1);
  });
}

describeOnEachStore('team usage', 'teams', teamSuite);
