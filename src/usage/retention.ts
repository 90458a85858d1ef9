import { Logger } from '@nestjs/common';
import type { UsageRepository } from './ledger-row';

const HOUR_MS = 3_600_000;

/**
 * Deletes ledger rows older than the retention window, hourly (first run a minute after
 * boot). The daily per-key, per-model totals are kept: budgets and long-range totals
 * read them, not the rows. Replicas may prune at once; the deletes simply overlap.
 */
export class LedgerRetention {
  private readonly logger = new Logger('UsageRetention');
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly repo: UsageRepository,
    private readonly retentionDays: number,
  ) {}

  start(): void {
    const first = setTimeout(() => {
      void this.prune();
      const every = setInterval(() => void this.prune(), HOUR_MS);
      every.unref();
      this.timers.push(every);
    }, 60_000);
    first.unref();
    this.timers.push(first);
  }

  stop(): void {
    for (const t of this.timers) {
      clearTimeout(t);
    }
    this.timers = [];
  }

  async prune(now = Date.now()): Promise<number> {
    try {
      const deleted = await this.repo.prune(new Date(now - this.retentionDays * 86_400_000));
      if (deleted > 0) {
        this.logger.log(`pruned ${deleted} ledger rows older than ${this.retentionDays} days`);
      }
      return deleted;
    } catch (err) {
      this.logger.warn(`ledger pruning failed: ${(err as Error).message}`);
      return 0;
    }
  }
}
