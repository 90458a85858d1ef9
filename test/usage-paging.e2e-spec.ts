import { randomUUID } from 'node:crypto';
import { DATABASE } from '../src/db/db.module';
import type { OpenDatabase } from '../src/db/database';
import type { LedgerRow } from '../src/usage/ledger-row';
import { KyselyUsageRepository } from '../src/usage/usage.repository';
import { ADMIN_TOKEN, admin, gatewayOnStore } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

const ROWS = 3000;
/** The listing's window: every row below is inside it, an hour before now. */
const END = Date.now() - 3_600_000;
const FROM = new Date(END - 86_400_000).toISOString();
const TO = new Date(END + 1).toISOString();

function row(requestId: string, at: number, keyId: string): LedgerRow {
  return {
    rowId: randomUUID(),
    createdAt: new Date(at),
    requestId,
    keyId,
    team: null,
    endpoint: 'chat.completions',
    method: 'POST',
    modelRequested: 'test-gpt',
    model: 'test-gpt',
    provider: 'fake-openai',
    status: 200,
    outcome: 'completed',
    stream: false,
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    costPico: 1n,
    costEstimated: false,
    protectionCostPico: 0n,
    latencyMs: 1,
    ttftMs: null,
    protections: null,
    errorCode: null,
  };
}

interface Listed {
  id: string;
  created_at: string;
  request_id: string;
}

/** Keyset paging of the usage ledger and its export, on each database the store runs on. */
function pagingSuite(env: () => Promise<StoreBackend>) {
  const store = gatewayOnStore(env);
  let repo: KyselyUsageRepository;
  /** request id -> created_at (ms) of every row the listing window holds. */
  const stored = new Map<string, number>();
  let seq = 0;
  let keyB = new Map<string, number>();

  /** Writes `n` rows in batches, as the ledger writer would (ids in insertion order). */
  async function insert(
    n: number,
    at: (i: number) => number,
    keyId = 'key_a',
    into = stored,
  ): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < n; start += 500) {
      const batch: LedgerRow[] = [];
      for (let i = start; i < Math.min(n, start + 500); i++) {
        const r = row(`req-${seq++}`, at(i), keyId);
        batch.push(r);
        ids.push(r.requestId);
        into.set(r.requestId, r.createdAt.getTime());
      }
      await repo.insert(batch);
    }
    return ids;
  }

  beforeAll(async () => {
    repo = new KyselyUsageRepository(store.gw.app.get<OpenDatabase>(DATABASE).db);
    // Times in random order against insertion (so the identity alone orders them wrong),
    // many of them shared by several rows (so the tie-break decides), and ids crossing
    // 9→10, 99→100 and 999→1000 (where text order and number order part).
    await insert(ROWS, () => END - 1 - Math.floor(Math.random() * 600) * 1000);
    const b = await insert(400, (i) => END - 2 - i * 7, 'key_b');
    keyB = new Map(b.map((id) => [id, stored.get(id) ?? 0]));
  }, 120_000);

  /** Pages through `/usage/requests`, calling `between` after each page. */
  async function listAll(
    query: string,
    limit: number,
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<Listed[]> {
    const out: Listed[] = [];
    let after: string | undefined;
    for (;;) {
      const cursor = after === undefined ? '' : `&after=${encodeURIComponent(after)}`;
      const res = await admin(store.gw, 'GET', `/usage/requests?${query}&limit=${limit}${cursor}`);
      expect(res.status).toBe(200);
      out.push(...(res.body.data as Listed[]));
      if (!res.body.has_more) {
        expect(res.body.next_cursor).toBeNull();
        return out;
      }
      after = res.body.next_cursor as string;
      await between();
    }
  }

  /** Each expected row once, newest first, ties by id descending. */
  function expectExactlyOnce(listed: Listed[], expected: Map<string, number>): void {
    const ids = listed.map((r) => r.request_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(expected.size);
    expect(ids.filter((id) => !expected.has(id))).toEqual([]);
    for (let i = 1; i < listed.length; i++) {
      const [a, b] = [listed[i - 1], listed[i]];
      const ta = Date.parse(a.created_at);
      const tb = Date.parse(b.created_at);
      expect(ta > tb || (ta === tb && BigInt(a.id) > BigInt(b.id))).toBe(true);
    }
  }

  const window = `from=${encodeURIComponent(FROM)}&to=${encodeURIComponent(TO)}`;

  it('lists every row exactly once, newest first, whatever the page size', async () => {
    for (const limit of [100, 37]) {
      expectExactlyOnce(await listAll(window, limit), stored);
    }
  }, 120_000);

  it("pages one key's rows exactly once in small pages", async () => {
    const listed = await listAll(`${window}&key_id=key_b`, 7);
    expect(listed).toHaveLength(400);
    expectExactlyOnce(listed, keyB);
  }, 120_000);

  it('keeps a listing to the rows stored when it began while others are written, backdated ones too', async () => {
    const before = new Map(stored);
    const late = new Map<string, number>();
    let round = 0;
    const listed = await listAll(window, 50, async () => {
      round++;
      // New rows at the window's newest edge, and rows a replica buffered during an outage
      // and writes only now, dated anywhere in the window (behind the cursor included).
      await insert(5, () => END, 'key_a', late);
      await insert(5, (i) => END - 1 - ((round * 37 + i * 101) % 600) * 1000, 'key_a', late);
    });
    expect(round).toBeGreaterThan(50);
    expectExactlyOnce(listed, before);
    // A listing begun now has them all.
    for (const [id, at] of late) {
      stored.set(id, at);
    }
    expectExactlyOnce(await listAll(window, 100), stored);
  }, 120_000);

  it('exports every row of the filter exactly once as CSV and JSON Lines, the newest included', async () => {
    // Written just now: the export's default end is now, so it must be in it.
    const fresh = await insert(3, () => Date.now() - 1000, 'key_c', new Map());
    const from = encodeURIComponent(FROM);
    const csv = await fetch(`${store.gw.origin}/admin/v1/usage/export?from=${from}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...lines] = (await csv.text()).split('\r\n').filter((l) => l !== '');
    expect(header.split(',').slice(0, 2)).toEqual(['created_at', 'request_id']);
    const csvIds = lines.map((l) => l.split(',')[1]);
    expect(new Set(csvIds).size).toBe(csvIds.length);
    expect(csvIds.slice(0, 3)).toEqual([...fresh].reverse());
    expect(csvIds.sort()).toEqual([...stored.keys(), ...fresh].sort());

    const jsonl = await fetch(
      `${store.gw.origin}/admin/v1/usage/export?format=jsonl&from=${from}&key_id=key_b`,
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    expect(jsonl.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const rows = (await jsonl.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Listed);
    expectExactlyOnce(rows, keyB);
  }, 120_000);

  it('refuses a cursor it did not write, and an unknown export format', async () => {
    const cursor = (text: string): string => Buffer.from(text).toString('base64url');
    for (const after of [
      '12345',
      'not-a-cursor',
      cursor('x|1|2'),
      // Shaped right, but no day or id the database holds: never a 500.
      cursor('2026-02-30T10:00:00.000000Z|5|9'),
      cursor('2026-01-31T24:61:00.000000Z|5|9'),
      cursor('2026-01-31T10:00:00.000000Z|9223372036854775808|9'),
      cursor('2026-01-31T10:00:00.000000Z|5|9999999999999999999'),
      cursor('2026-01-31T10:00:00.000000Z|0|9'),
      cursor('2026-01-31T10:00:00.000000Z|05|9'),
    ]) {
      const res = await admin(store.gw, 'GET', `/usage/requests?after=${after}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'after', code: 'invalid_cursor' });
    }
    const res = await admin(store.gw, 'GET', '/usage/export?format=xlsx');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'format' });
  });
}

describeOnEachStore('usage listing and export', 'paging', pagingSuite);
