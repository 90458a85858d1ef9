import { Logger } from '@nestjs/common';
import type { DbEvents } from '../db/events';
import type { LedgerRow, UsageRepository } from './ledger-row';
import { LedgerWriter } from './ledger.writer';
import { SpendTracker } from './spend.tracker';

function row(keyId: string, costPico: bigint, i = 0): LedgerRow {
  return {
    rowId: `row-${keyId}-${i}-${costPico}`,
    createdAt: new Date(),
    requestId: `req_${i}`,
    keyId,
    endpoint: 'chat.completions',
    method: 'POST',
    modelRequested: 'm',
    model: 'm',
    provider: 'p',
    status: 200,
    outcome: 'completed',
    stream: false,
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    costPico,
    costEstimated: false,
    protectionCostPico: 0n,
    latencyMs: 1,
    ttftMs: null,
    protections: null,
    errorCode: null,
    cached: false,
    team: null,
  };
}

/** A database that stores rows by id and can be switched off. */
class FakeUsageDb {
  readonly rows = new Map<string, LedgerRow>();
  down = false;
  inserts = 0;

  readonly repo = {
    insert: async (rows: LedgerRow[]) => {
      this.inserts++;
      await Promise.resolve();
      if (this.down) {
        throw new Error('connection refused');
      }
      for (const r of rows) {
        this.rows.set(r.rowId, r);
      }
    },
    spend: async ({ keyIds }: { keyIds: string[] }) => {
      await Promise.resolve();
      if (this.down) {
        throw new Error('connection refused');
      }
      const out = new Map<string, bigint>();
      for (const r of this.rows.values()) {
        if (keyIds.includes(r.keyId)) {
          out.set(r.keyId, (out.get(r.keyId) ?? 0n) + r.costPico);
        }
      }
      return out;
    },
  } as unknown as UsageRepository;
}

const events = { publish: jest.fn(() => Promise.resolve()) } as unknown as DbEvents;

function writer(db: FakeUsageDb, max = 100): { ledger: LedgerWriter; spend: SpendTracker } {
  const spend = new SpendTracker(db.repo, false);
  const ledger = new LedgerWriter(db.repo, events, spend, {
    flushIntervalMs: 10,
    maxBufferedRows: max,
    batchSize: 3,
    instanceId: 'me',
  });
  return { ledger, spend };
}

describe('LedgerWriter', () => {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('writes buffered rows in batches and announces the keys that spent', async () => {
    const db = new FakeUsageDb();
    const { ledger } = writer(db);
    for (let i = 0; i < 7; i++) {
      ledger.enqueue(row('k', 1n, i));
    }
    await ledger.flush();
    expect(db.rows.size).toBe(7);
    expect(db.inserts).toBe(3);
    expect(ledger.snapshot()).toMatchObject({ buffered: 0, written: 7, dropped: 0 });
    expect(events.publish).toHaveBeenCalledWith(
      'gw_usage',
      JSON.stringify({ from: 'me', keys: ['k'] }),
    );
  });

  it('keeps rows through an outage and writes them when the database is back', async () => {
    const db = new FakeUsageDb();
    const { ledger } = writer(db);
    db.down = true;
    ledger.enqueue(row('k', 1n, 1));
    ledger.enqueue(row('k', 1n, 2));
    await ledger.flush(true);
    expect(ledger.snapshot()).toMatchObject({ buffered: 2, failedFlushes: 1 });
    db.down = false;
    await ledger.flush(true);
    expect(db.rows.size).toBe(2);
    expect(ledger.snapshot().buffered).toBe(0);
  });

  it('drops and counts rows past the bound', () => {
    const db = new FakeUsageDb();
    const { ledger } = writer(db, 2);
    for (let i = 0; i < 5; i++) {
      ledger.enqueue(row('k', 1n, i));
    }
    expect(ledger.snapshot()).toMatchObject({ buffered: 2, dropped: 3 });
  });

  it('flushes what is left on close', async () => {
    const db = new FakeUsageDb();
    const { ledger } = writer(db);
    ledger.enqueue(row('k', 1n, 1));
    await ledger.close();
    expect(db.rows.size).toBe(1);
  });

  it('counts spend once whether it is still buffered or already written', async () => {
    const db = new FakeUsageDb();
    const { ledger, spend } = writer(db);
    expect(await spend.spent('k', 'total')).toBe(0n);
    ledger.enqueue(row('k', 5n, 1));
    expect(spend.spent('k', 'total')).toBe(5n);
    await ledger.flush();
    expect(spend.spent('k', 'total')).toBe(5n);
    ledger.enqueue(row('k', 7n, 2));
    expect(spend.spent('k', 'total')).toBe(12n);
  });

  it('learns of another replica’s spend when told, without double counting its own', async () => {
    const db = new FakeUsageDb();
    const { ledger, spend } = writer(db);
    await spend.spent('k', 'total');
    ledger.enqueue(row('k', 5n, 1));
    await ledger.flush();
    db.rows.set('elsewhere', row('k', 100n, 9)); // written by another replica
    spend.changed(['k']);
    await new Promise((r) => setTimeout(r, 60));
    expect(spend.spent('k', 'total')).toBe(105n);
  });
});
