import { type CanActivate, Global, Module, type OnModuleInit, type Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AuthGuard } from '../auth/auth.guard';
import { CatalogModule } from '../catalog/catalog.module';
import { GenerationGuard } from '../formats/shared/generation.guard';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsServer } from './metrics/metrics-server';
import { MetricsService } from './metrics/metrics.service';
import { StateMetrics } from './metrics/state-metrics';
import { observabilityConfig } from '../config/observability.config';
import { RequestObserver } from './request-observer';
import { traceGuards } from './tracing/guard-spans';
import { TracingService } from './tracing/tracing.service';

/** Guards that get a child span each when tracing is on, and the span's name. */
const TRACED_GUARDS: readonly (readonly [Type<CanActivate>, string])[] = [
  [AuthGuard, 'gateway.auth_guard'],
  // Model eligibility, validation, rule S1, limits and the protections' checks, in order.
  [GenerationGuard, 'gateway.admission'],
];

/**
 * Prometheus metrics (`GET /metrics`, METRICS_PORT) and OpenTelemetry traces. Global so
 * that any module can inject MetricsService to add its own metrics.
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(observabilityConfig), CatalogModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsServer, StateMetrics, TracingService, RequestObserver],
  exports: [MetricsService, TracingService, RequestObserver],
})
export class ObservabilityModule implements OnModuleInit {
  constructor(private readonly tracing: TracingService) {}

  onModuleInit(): void {
    if (this.tracing.enabled) {
      traceGuards(TRACED_GUARDS);
    }
  }
}
