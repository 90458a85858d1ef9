import { Logger } from '@nestjs/common';
import type { DbEvents } from '../db/events';
import type { LedgerRow, UsageRepository } from './ledger-row';
import type { SpendTracker } from './spend.tracker';

export interface LedgerWriterOptions {
  flushIntervalMs: number;
  maxBufferedRows: number;
  batchSize?: number;
  /** Identifies this replica in usage notifications, so it ignores its own. */
  instanceId: string;
}

/** Counters of the ledger writer, for health and tests. */
export interface LedgerStats {
  buffered: number;
  written: number;
  dropped: number;
  failedFlushes: number;
  /** False while writes fail and are retried (the database is unreachable). */
  writing: boolean;
}

const MAX_BACKOFF_MS = 2_000;
/** Keys per usage notification, well under PostgreSQL's 8000-byte payload limit. */
const KEYS_PER_NOTIFICATION = 100;

/**
 * Writes ledger rows in batches, off the request path: requests only append to a
 * bounded in-memory buffer. A failed write keeps the rows and retries with backoff until
 * the database is back; only when the buffer is full are new rows dropped, and counted.
 * After each write, other replicas are told which keys spent, so their budget checks
 * see it.
 */
export class LedgerWriter {
  private readonly logger = new Logger('UsageLedger');
  private buffer: LedgerRow[] = [];
  private readonly stats = { written: 0, dropped: 0, failedFlushes: 0 };
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private retryAt = 0;
  private backoffMs = 0;
  private closed = false;

  constructor(
    private readonly repo: UsageRepository,
    private readonly events: DbEvents,
    private readonly spend: SpendTracker,
    private readonly options: LedgerWriterOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  enqueue(row: LedgerRow): void {
    if (this.buffer.length >= this.options.maxBufferedRows) {
      if (this.stats.dropped++ % 1000 === 0) {
        this.logger.error(
          `ledger buffer full (${this.options.maxBufferedRows} rows): dropping rows; ${this.stats.dropped} dropped so far`,
        );
      }
      return;
    }
    this.buffer.push(row);
    this.spend.recorded(row);
  }

  snapshot(): LedgerStats {
    return { buffered: this.buffer.length, ...this.stats, writing: this.backoffMs === 0 };
  }

  /** Writes what is buffered; one flush at a time, later callers share it. */
  flush(force = false): Promise<void> {
    if (!force && Date.now() < this.retryAt) {
      return Promise.resolve();
    }
    this.flushing ??= this.drain().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Final flush at shutdown: keeps retrying until the buffer is empty or `deadlineMs`. */
  async close(deadlineMs = 10_000): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    clearInterval(this.timer);
    const until = Date.now() + deadlineMs;
    while (this.buffer.length > 0 && Date.now() < until) {
      await this.flush(true);
      if (this.buffer.length > 0) {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    if (this.buffer.length > 0) {
      this.logger.error(`shutdown: ${this.buffer.length} ledger rows could not be written`);
    }
  }

  private async drain(): Promise<void> {
    const batchSize = this.options.batchSize ?? 500;
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, batchSize);
      this.spend.beforeCommit(batch);
      try {
        await this.repo.insert(batch);
      } catch (err) {
        this.spend.afterCommit(batch, false);
        this.failed(err);
        return;
      }
      // Rows enqueued meanwhile were appended after the batch: it is still at the front.
      this.buffer = this.buffer.slice(batch.length);
      this.spend.afterCommit(batch, true);
      this.stats.written += batch.length;
      if (this.backoffMs > 0) {
        this.logger.log(`database back: ledger writes resumed (${this.buffer.length} buffered)`);
      }
      this.backoffMs = 0;
      this.retryAt = 0;
      this.announce(batch);
    }
  }

  private failed(err: unknown): void {
    this.stats.failedFlushes++;
    if (this.backoffMs === 0) {
      this.logger.warn(
        `ledger write failed (${(err as Error).message}); keeping ${this.buffer.length} rows and retrying`,
      );
    }
    this.backoffMs = Math.min(
      Math.max(this.backoffMs * 2, this.options.flushIntervalMs),
      MAX_BACKOFF_MS,
    );
    this.retryAt = Date.now() + this.backoffMs;
  }

  private announce(batch: LedgerRow[]): void {
    const keys = [...new Set(batch.map((r) => r.keyId))];
    for (let i = 0; i < keys.length; i += KEYS_PER_NOTIFICATION) {
      const payload = JSON.stringify({
        from: this.options.instanceId,
        keys: keys.slice(i, i + KEYS_PER_NOTIFICATION),
      });
      this.events.publish('gw_usage', payload).catch(() => undefined);
    }
  }
}
