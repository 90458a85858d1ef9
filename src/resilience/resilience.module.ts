import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { FallbackPlan } from './fallback-plan';
import { HealthBoard } from './health-board';
import { ResilienceService } from './resilience.service';
import { UpstreamsHealthController } from './upstreams-health.controller';

/** Deployments, retries, fallbacks, breakers and per-call deadlines of upstream calls. */
@Module({
  imports: [AuthModule, CatalogModule, UpstreamModule],
  controllers: [UpstreamsHealthController],
  providers: [HealthBoard, ResilienceService, FallbackPlan],
  exports: [ResilienceService, FallbackPlan],
})
export class ResilienceModule {}
