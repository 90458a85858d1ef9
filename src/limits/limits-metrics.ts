import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { MetricsService } from '../observability/metrics/metrics.service';
import { LimitsHealth } from './limits-health';

/** A store error within this window counts the rate-limit storage as down. */
export const STORAGE_DOWN_WINDOW_MS = 15_000;

/**
 * The rate-limit storage's health as metrics, read from LimitsHealth when Prometheus
 * scrapes, so the request path does nothing for them.
 */
@Injectable()
export class LimitsMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly metrics: MetricsService,
    private readonly limits: LimitsHealth,
  ) {}

  onApplicationBootstrap(): void {
    const limits = this.limits;
    this.metrics.gauge({
      name: 'gateway_rate_limit_storage_up',
      help: `1 unless the rate-limit storage (Redis) failed in the last ${STORAGE_DOWN_WINDOW_MS / 1000} s.`,
      labelNames: ['storage'],
      collect() {
        const s = limits.snapshot();
        const recent =
          s.lastError !== undefined &&
          Date.now() - Date.parse(s.lastError.at) < STORAGE_DOWN_WINDOW_MS;
        this.reset();
        this.set({ storage: s.storage }, recent ? 0 : 1);
      },
    });
    this.metrics.counter({
      name: 'gateway_rate_limit_storage_failures_total',
      help: 'Rate-limit storage errors, and requests let through (failed_open) or refused (failed_closed) because of them.',
      labelNames: ['kind'],
      collect() {
        // The counts live in LimitsHealth (also served at /health/limits); mirrored here.
        const s = limits.snapshot();
        this.reset();
        this.inc({ kind: 'store_error' }, s.storeErrors);
        this.inc({ kind: 'failed_open' }, s.failedOpen);
        this.inc({ kind: 'failed_closed' }, s.failedClosed);
      },
    });
  }
}
