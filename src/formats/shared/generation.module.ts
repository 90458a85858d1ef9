import { Module, type OnModuleInit } from '@nestjs/common';
import { CatalogModule } from '../../catalog/catalog.module';
import { PolicyModule } from '../../policy/policy.module';
import { TracingService } from '../../observability/tracing/tracing.service';
import { ResilienceModule } from '../../resilience/resilience.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { GenerationGuard } from './generation.guard';
import { GenerationPipeline } from './generation.pipeline';

/** The generation pipeline every format module serves its generation endpoint with. */
@Module({
  imports: [CatalogModule, PolicyModule, UpstreamModule, ResilienceModule],
  providers: [GenerationPipeline],
  exports: [GenerationPipeline, CatalogModule, PolicyModule, UpstreamModule, ResilienceModule],
})
export class GenerationModule implements OnModuleInit {
  constructor(private readonly tracing: TracingService) {}

  onModuleInit(): void {
    // Model eligibility, validation, rule S1, limits and the protections' checks, in order.
    this.tracing.traceGuards([[GenerationGuard, 'gateway.admission']]);
  }
}
