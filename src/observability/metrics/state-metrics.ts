import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application } from 'express';
import { activeStreamsOf } from '../../common/sse/active-streams';
import { MetricsService } from './metrics.service';

/**
 * Gauges of state that lives below the features (open streams), read when Prometheus
 * scrapes, so the request path does nothing for them. The features register their own
 * (LimitsMetrics, LedgerMetrics).
 */
@Injectable()
export class StateMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly metrics: MetricsService,
    private readonly adapter: HttpAdapterHost,
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
  }
}
