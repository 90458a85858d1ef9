import { Module } from '@nestjs/common';
import { CacheModule } from '../../cache/cache.module';
import { CatalogModule } from '../../catalog/catalog.module';
import { PolicyModule } from '../../policy/policy.module';
import { ResilienceModule } from '../../resilience/resilience.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { GenerationPipeline } from './generation.pipeline';

/** The generation pipeline every format module serves its generation endpoint with. */
@Module({
  imports: [CatalogModule, PolicyModule, UpstreamModule, ResilienceModule, CacheModule],
  providers: [GenerationPipeline],
  exports: [GenerationPipeline, CatalogModule, PolicyModule, UpstreamModule, ResilienceModule],
})
export class GenerationModule {}
