import { Injectable, Logger } from '@nestjs/common';

const WARN_EVERY_MS = 10_000;

export interface LimitsHealthSnapshot {
  storage: 'memory' | 'redis';
  failMode: 'open' | 'closed';
  /** Requests let through unchecked because the store failed (fail open). */
  failedOpen: number;
  /** Requests refused with 503 because the store failed (fail closed). */
  failedClosed: number;
  /** Store errors of any kind: checks, usage corrections, lease releases, connection. */
  storeErrors: number;
  lastError?: { operation: string; message: string; at: string };
}

/**
 * Counters of rate-limit storage failures, served at `GET /health/limits`. Failures are
 * logged as warnings at most once every 10 s (with the running counts), so an outage
 * does not flood the log with one line per request.
 */
@Injectable()
export class LimitsHealth {
  private readonly logger = new Logger('RateLimits');
  private storage: LimitsHealthSnapshot['storage'] = 'memory';
  private failMode: LimitsHealthSnapshot['failMode'] = 'open';
  private failedOpen = 0;
  private failedClosed = 0;
  private storeErrors = 0;
  private lastError?: LimitsHealthSnapshot['lastError'];
  private lastWarnAt = 0;

  configure(storage: LimitsHealthSnapshot['storage'], failMode: 'open' | 'closed'): void {
    this.storage = storage;
    this.failMode = failMode;
  }

  /** A rate-limit check could not be made; `failMode` decided what the request got. */
  checkFailed(err: unknown): void {
    if (this.failMode === 'open') {
      this.failedOpen++;
    } else {
      this.failedClosed++;
    }
    this.storeError('check', err);
  }

  storeError(operation: string, err: unknown): void {
    this.storeErrors++;
    const message = err instanceof Error ? err.message : String(err);
    this.lastError = { operation, message, at: new Date().toISOString() };
    const now = Date.now();
    if (now - this.lastWarnAt >= WARN_EVERY_MS) {
      this.lastWarnAt = now;
      this.logger.warn(
        `Rate-limit storage unavailable during ${operation} (${message}); failing ${this.failMode}. ` +
          `Totals: failedOpen=${this.failedOpen} failedClosed=${this.failedClosed} storeErrors=${this.storeErrors}`,
      );
    }
  }

  snapshot(): LimitsHealthSnapshot {
    return {
      storage: this.storage,
      failMode: this.failMode,
      failedOpen: this.failedOpen,
      failedClosed: this.failedClosed,
      storeErrors: this.storeErrors,
      lastError: this.lastError,
    };
  }
}
