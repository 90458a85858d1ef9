import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { Application } from 'express';
import { activeStreamsOf } from '../../common/sse/active-streams';
import { LimitsHealth } from '../../limits/limits-health';
import { UsagePipeline } from '../../usage/usage.module';
import { MetricsService } from './metrics.service';

/** A store error within this window counts the rate-limit storage as down. */
export const STORAGE_DOWN_WINDOW_MS = 15_000;

/**
 * Gauges of state that lives elsewhere (open streams, rate-limit storage health), read
 * when Prometheus scrapes, so the request path does nothing for them.
 */
@Injectable()
export class StateMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly metrics: MetricsService,
    private readonly adapter: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
  ) {}

  onApplicationBootstrap(): void {
    const app = this.adapter.httpAdapter?.getInstance<Application>();
    if (app !== undefined) {
      const streams = activeStreamsOf(app);
      this.metrics.gauge({
        name: 'gateway_active_streams',
        help: 'SSE responses in flight.',
        collect() {
          this.set(streams.size);
        },
      });
    }
    // Not exported by LimitsModule; looked up rather than making that module export it.
    const limits = this.moduleRef.get(LimitsHealth, { strict: false });
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
    this.databaseMetrics();
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

  /** The key store's database, seen through the usage ledger's writes (absent when off). */
  private databaseMetrics(): void {
    const ledger = this.moduleRef.get(UsagePipeline, { strict: false }).ledger;
    if (ledger === null) {
      return;
    }
    this.metrics.gauge({
      name: 'gateway_database_up',
      help: '1 unless usage-ledger writes to the database are failing and being retried.',
      collect() {
        this.set(ledger.snapshot().writing ? 1 : 0);
      },
    });
    this.metrics.gauge({
      name: 'gateway_usage_ledger_buffered_rows',
      help: 'Ledger rows waiting to be written.',
      collect() {
        this.set(ledger.snapshot().buffered);
      },
    });
    this.metrics.counter({
      name: 'gateway_usage_ledger_rows_total',
      help: 'Ledger rows written, and dropped because the buffer was full during an outage.',
      labelNames: ['state'],
      collect() {
        const s = ledger.snapshot();
        this.reset();
        this.inc({ state: 'written' }, s.written);
        this.inc({ state: 'dropped' }, s.dropped);
      },
    });
  }
}
