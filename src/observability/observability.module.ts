import { Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { CatalogModule } from '../catalog/catalog.module';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsServer } from './metrics/metrics-server';
import { MetricsService } from './metrics/metrics.service';
import { StateMetrics } from './metrics/state-metrics';
import { observabilityConfig } from '../config/observability.config';
import { RequestObserver } from './request-observer';
import { TracingService } from './tracing/tracing.service';

/**
 * Prometheus metrics (`GET /metrics`, METRICS_PORT) and OpenTelemetry traces. A port:
 * global, so that the features inject MetricsService and TracingService and push their
 * metrics, gauges and traced guards into it; it imports none of them.
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(observabilityConfig), CatalogModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsServer, StateMetrics, TracingService, RequestObserver],
  exports: [MetricsService, TracingService, RequestObserver],
})
export class ObservabilityModule {}
