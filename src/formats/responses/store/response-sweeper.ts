import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../../../config';
import type { ResponseStore } from './response-store';
import { RESPONSE_STORE } from './response-store.token';

/** Responses deleted per statement: short transactions, never one huge delete. */
const BATCH = 500;

/**
 * Deletes stored responses past their retention (RESPONSES_RETENTION_DAYS), with their
 * owner records, every RESPONSES_SWEEP_INTERVAL_MS (first run a minute after boot), in
 * batches. Replicas may sweep at once; their deletes simply overlap. Expired responses are
 * never served meanwhile: every read filters on the expiry.
 */
@Injectable()
export class ResponseSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ResponseSweeper.name);
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(RESPONSE_STORE) private readonly store: ResponseStore,
    config: ConfigService<AllConfig, true>,
  ) {
    this.intervalMs = config.get('store', { infer: true }).responses.sweepIntervalMs;
  }

  onApplicationBootstrap(): void {
    this.timer = setTimeout(() => void this.tick(), Math.min(60_000, this.intervalMs));
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Deletes every response expired at `now`, batch by batch; how many went. */
  async sweep(now = new Date()): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        const swept = await this.store.sweep(now, BATCH);
        total += swept;
        if (swept < BATCH) {
          break;
        }
      }
    } catch (error) {
      this.logger.warn(`stored responses sweep failed: ${(error as Error).message}`);
    }
    if (total > 0) {
      this.logger.log(`deleted ${total} stored responses past their retention`);
    }
    return total;
  }

  private async tick(): Promise<void> {
    await this.sweep();
    if (this.timer !== undefined) {
      this.timer = setTimeout(() => void this.tick(), this.intervalMs);
      this.timer.unref();
    }
  }
}
