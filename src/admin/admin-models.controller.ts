import { Controller, Get, UseGuards } from '@nestjs/common';
import { Public } from '../common/public.decorator';
import { CatalogService } from '../catalog/catalog.service';
import { AdminGuard } from './admin.guard';

/**
 * `GET /admin/v1/models`: every catalog model with prices, context windows, endpoints and
 * capabilities, callable or not (`provider_configured`), plus every provider and the
 * variable its missing key needs. Only listing: /v1 still serves callable models alone.
 */
@Controller('admin/v1/models')
@Public()
@UseGuards(AdminGuard)
export class AdminModelsController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(): object {
    const data = this.catalog.listAll().map((model) => ({
      id: model.id,
      display_name: model.displayName,
      family: model.family,
      provider: model.provider.name,
      provider_configured: model.provider.available,
      provider_key_env: model.provider.available ? null : (model.provider.apiKeyEnv ?? null),
      context_window: model.contextWindow,
      max_output_tokens: model.maxOutputTokens,
      pricing_per_million_usd: {
        input: model.pricing.input,
        output: model.pricing.output,
        cached_input: model.pricing.cachedInput ?? null,
        cache_write: model.pricing.cacheWrite ?? null,
      },
      endpoints: [...model.endpoints],
      capabilities: model.capabilities,
    }));
    const providers = [...this.catalog.providers()].map((p) => ({
      name: p.name,
      kind: p.kind,
      configured: p.available,
      key_env: p.available ? null : (p.apiKeyEnv ?? null),
    }));
    return { object: 'list', data, providers };
  }
}
