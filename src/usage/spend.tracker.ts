import { Logger } from '@nestjs/common';
import { type BudgetPeriod, budgetWindow } from '../common/key-policy';
import type { LedgerRow, UsageRepository } from './ledger-row';

/** Backstop: a key's spend is re-read this often even if no notification arrives. */
const REFRESH_AFTER_MS = 30_000;
/** Notifications from other replicas are gathered this long into one read. */
const DEBOUNCE_MS = 20;

interface Entry {
  period: BudgetPeriod;
  start: number;
  /** Spend stored in the database for the period (as last read, plus our own commits). */
  stored: bigint;
  /** This replica's spend not yet written to the database. */
  pending: bigint;
  /** Bumped by every commit touching the key, so a read racing a commit is not trusted. */
  version: number;
  committing: number;
  loaded: boolean;
  loadedAt: number;
  loading?: Promise<void>;
}

/**
 * Spend per key in its budget period, in pico-dollars, as the ledger has it, for what a key
 * is shown (`GET /v1/key`, the admin key lists); the budget itself is enforced by the
 * reservations of ReservingBudgetGate. Kept in process: it is the database's daily totals (read
 * once per key and period, and again whenever another replica reports a flush) plus
 * this replica's requests that finished but are not yet flushed. A read that overlaps a
 * flush of the same key is discarded and repeated, so nothing is counted twice or missed.
 */
export class SpendTracker {
  private readonly logger = new Logger('Budgets');
  private readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private debounce?: NodeJS.Timeout;

  constructor(
    private readonly repo: UsageRepository,
    private readonly includeProtections: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** Pico-dollars a row counts against its key's budget. */
  chargeOf(row: Pick<LedgerRow, 'costPico' | 'protectionCostPico'>): bigint {
    return this.includeProtections ? row.costPico + row.protectionCostPico : row.costPico;
  }

  /** Spend of the key in the period containing now; a promise only on first use. */
  spent(keyId: string, period: BudgetPeriod): bigint | Promise<bigint> {
    const now = this.now();
    let entry = this.entries.get(keyId);
    const { start } = budgetWindow(period, now);
    if (!entry || entry.period !== period || entry.start !== start) {
      entry = {
        period,
        start,
        stored: 0n,
        pending: 0n,
        version: 0,
        committing: 0,
        loaded: false,
        loadedAt: 0,
      };
      this.entries.set(keyId, entry);
    }
    if (entry.loaded) {
      if (now - entry.loadedAt > REFRESH_AFTER_MS) {
        void this.refresh([keyId]);
      }
      return entry.stored + entry.pending;
    }
    const current = entry;
    return this.load(keyId, current).then(() => current.stored + current.pending);
  }

  /** A request of this replica finished; its row is queued for the database. */
  recorded(row: LedgerRow): void {
    const entry = this.entries.get(row.keyId);
    if (entry && row.createdAt.getTime() >= entry.start) {
      entry.pending += this.chargeOf(row);
    }
  }

  /** These rows are about to be written: reads of their keys until then are suspect. */
  beforeCommit(rows: LedgerRow[]): void {
    for (const keyId of new Set(rows.map((r) => r.keyId))) {
      const entry = this.entries.get(keyId);
      if (entry) {
        entry.committing++;
        entry.version++;
      }
    }
  }

  /** The write finished: on success the rows move from pending to stored. */
  afterCommit(rows: LedgerRow[], ok: boolean): void {
    for (const keyId of new Set(rows.map((r) => r.keyId))) {
      const entry = this.entries.get(keyId);
      if (entry) {
        entry.committing--;
        entry.version++;
      }
    }
    if (!ok) {
      return;
    }
    for (const row of rows) {
      const entry = this.entries.get(row.keyId);
      if (entry && row.createdAt.getTime() >= entry.start) {
        const charge = this.chargeOf(row);
        entry.pending -= charge;
        entry.stored += charge;
      }
    }
  }

  /** Another replica flushed rows of these keys. */
  changed(keyIds: string[]): void {
    for (const id of keyIds) {
      if (this.entries.has(id)) {
        this.dirty.add(id);
      }
    }
    if (this.dirty.size > 0 && !this.debounce) {
      this.debounce = setTimeout(() => {
        this.debounce = undefined;
        const ids = [...this.dirty];
        this.dirty.clear();
        void this.refresh(ids);
      }, DEBOUNCE_MS);
      this.debounce.unref();
    }
  }

  /**
   * Spend of each key in its own period (the window `budgetWindow` defines, as the budget
   * check uses), for display: the stored totals, read fresh, plus this replica's spend
   * not yet flushed. One query per distinct period.
   */
  async periodSpend(
    keys: readonly { id: string; period: BudgetPeriod }[],
  ): Promise<Map<string, bigint>> {
    const now = this.now();
    const byStart = new Map<number, string[]>();
    for (const { id, period } of keys) {
      const { start } = budgetWindow(period, now);
      byStart.set(start, [...(byStart.get(start) ?? []), id]);
    }
    const out = new Map<string, bigint>();
    await Promise.all(
      [...byStart].map(async ([start, keyIds]) => {
        const stored = await this.repo.spend({
          keyIds,
          since: new Date(start),
          includeProtections: this.includeProtections,
        });
        for (const id of keyIds) {
          const entry = this.entries.get(id);
          const pending = entry?.start === start ? entry.pending : 0n;
          out.set(id, (stored.get(id) ?? 0n) + pending);
        }
      }),
    );
    return out;
  }

  close(): void {
    clearTimeout(this.debounce);
  }

  private async refresh(keyIds: string[]): Promise<void> {
    await Promise.all(
      keyIds.map((id) => {
        const entry = this.entries.get(id);
        return entry && !entry.loading ? this.load(id, entry) : Promise.resolve();
      }),
    );
  }

  /**
   * Reads the stored spend until no commit of the key overlapped the read. The first
   * load of a key that cannot reach the database counts only this replica's pending spend
   * (the request goes ahead: failing every budgeted request during an outage would
   * be worse than a bounded overshoot), and is retried on the next request.
   */
  private load(keyId: string, entry: Entry): Promise<void> {
    entry.loading ??= (async () => {
      try {
        for (let attempt = 0; attempt < 5; attempt++) {
          const version = entry.version;
          const since = new Date(entry.start);
          const spend = await this.repo.spend({
            keyIds: [keyId],
            since,
            includeProtections: this.includeProtections,
          });
          if (entry.version === version && entry.committing === 0) {
            entry.stored = spend.get(keyId) ?? 0n;
            entry.loaded = true;
            entry.loadedAt = this.now();
            return;
          }
        }
      } catch (err) {
        this.logger.warn(`cannot read the spend of ${keyId}: ${(err as Error).message}`);
        // Serve what is known; read again in the background about a second from now.
        entry.loaded = true;
        entry.loadedAt = this.now() - REFRESH_AFTER_MS + 1_000;
      } finally {
        entry.loading = undefined;
      }
    })();
    return entry.loading;
  }
}
