import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import { MetricsService } from '../observability/metrics/metrics.service';
import { type AuditEntry, isAuditAction, redact } from './audit-entry';
import { type AuditInsert, AuditRepository } from './audit.repository';

const FLUSH_MS = 100;
const BATCH_ROWS = 500;
/** Entries held while the database is failing; beyond this the oldest are dropped (counted). */
const BUFFER_MAX = 10_000;
const HOUR_MS = 3_600_000;

/**
 * The append-only audit log. `record` never waits for the database: entries are batched
 * and written a moment later, off the request's path. A write that fails is logged, kept
 * for the next attempt, and counted in `gateway_audit_entries_total{state="failed"}`; only
 * an outage long enough to fill the buffer drops entries, counted as `dropped`.
 */
@Injectable()
export class AuditLog implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AuditLog.name);
  readonly repo: AuditRepository | null;
  private buffer: AuditInsert[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  /** Entries at the buffer's head being written now: overflow never drops those. */
  private inFlight = 0;
  private readonly counts = { written: 0, failed: 0, dropped: 0 };
  private readonly retentionDays: number;
  private sweeper?: NodeJS.Timeout;

  constructor(
    @Inject(DATABASE) private readonly database: OpenDatabase | null,
    config: ConfigService<AllConfig, true>,
    metrics: MetricsService,
  ) {
    this.repo = database ? new AuditRepository(database.db) : null;
    this.retentionDays = config.get('audit', { infer: true }).retentionDays;
    const counts = this.counts;
    metrics.counter({
      name: 'gateway_audit_entries_total',
      help: 'Audit entries written, failed writes (retried), and entries dropped after a long database outage.',
      labelNames: ['state'],
      collect() {
        this.reset();
        this.inc({ state: 'written' }, counts.written);
        this.inc({ state: 'failed' }, counts.failed);
        this.inc({ state: 'dropped' }, counts.dropped);
      },
    });
  }

  onModuleInit(): void {
    if (this.database === null) {
      return;
    }
    // The last entries reach the table before the pool closes.
    this.database.beforeClose(() => this.flush());
    const first = setTimeout(() => {
      void this.sweep();
      this.sweeper = setInterval(() => void this.sweep(), HOUR_MS);
      this.sweeper.unref();
    }, 60_000);
    first.unref();
    this.sweeper = first;
  }

  onApplicationShutdown(): void {
    clearTimeout(this.sweeper);
    clearInterval(this.sweeper);
  }

  /** Appends an entry (secrets stripped from `change`); returns at once. */
  record(entry: AuditEntry): void {
    if (this.repo === null) {
      return;
    }
    if (!isAuditAction(entry.action)) {
      // A programming error, but the event still deserves a row.
      this.logger.error(`audit action '${entry.action}' is not of the form domain.verb`);
    }
    this.buffer.push({
      at: entry.at ?? new Date(),
      action: entry.action,
      actor: {
        kind: entry.actor.kind,
        id: entry.actor.id ?? null,
        name: entry.actor.name ?? null,
      },
      client: entry.client ?? null,
      target: entry.target ?? null,
      team: entry.team ?? null,
      change:
        entry.change === undefined || entry.change === null
          ? null
          : (redact(entry.change) as Record<string, unknown>),
      outcome: entry.outcome ?? 'success',
    });
    if (this.buffer.length > BUFFER_MAX) {
      const excess = this.buffer.length - BUFFER_MAX;
      this.buffer.splice(this.inFlight, excess);
      this.counts.dropped += excess;
      this.logger.error(`audit buffer full: dropped ${excess} oldest entries`);
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes everything buffered (tests and shutdown call it; the timer does otherwise). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) {
      await this.flushing;
    }
    if (this.repo === null || this.buffer.length === 0) {
      return;
    }
    const repo = this.repo;
    this.flushing = (async () => {
      while (this.buffer.length > 0) {
        const batch = this.buffer.slice(0, BATCH_ROWS);
        this.inFlight = batch.length;
        try {
          await repo.append(batch);
        } catch (err) {
          this.inFlight = 0;
          this.counts.failed += batch.length;
          this.logger.error(
            `audit log write failed for ${batch.length} entries (kept, retried): ${(err as Error).message}`,
          );
          this.timer ??= setTimeout(() => void this.flush(), 1_000);
          return;
        }
        this.inFlight = 0;
        this.buffer.splice(0, batch.length);
        this.counts.written += batch.length;
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Deletes entries past AUDIT_RETENTION_DAYS; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.repo === null) {
      return 0;
    }
    try {
      const deleted = await this.repo.sweep(new Date(now - this.retentionDays * 86_400_000));
      if (deleted > 0) {
        this.logger.log(`removed ${deleted} audit entries older than ${this.retentionDays} days`);
      }
      return deleted;
    } catch (err) {
      this.logger.warn(`audit retention sweep failed: ${(err as Error).message}`);
      return 0;
    }
  }
}
