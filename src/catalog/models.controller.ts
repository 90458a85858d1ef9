import { Controller, Get, Headers, Param, Query, Req } from '@nestjs/common';
import { keyMayUseModel } from '../common/key-policy';
import { ModelNotFoundError } from '../common/errors/gateway-errors';
import type { GatewayRequest } from '../common/request-context';
import { CatalogService } from './catalog.service';
import type { CatalogModel } from './catalog.types';

interface OpenAiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  [extra: string]: unknown;
}

interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  max_input_tokens: number;
  max_tokens: number;
  [extra: string]: unknown;
}

function gatewayFields(m: CatalogModel): Record<string, unknown> {
  return {
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    pricing: {
      input_per_million: m.pricing.input,
      output_per_million: m.pricing.output,
      cached_input_per_million: m.pricing.cachedInput ?? null,
    },
    capabilities: m.capabilities,
    endpoints: [...m.endpoints],
  };
}

function toOpenAi(m: CatalogModel): OpenAiModel {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.family, ...gatewayFields(m) };
}

function toAnthropic(m: CatalogModel): AnthropicModel {
  return {
    type: 'model',
    id: m.id,
    display_name: m.displayName,
    created_at: new Date(m.created * 1000).toISOString().replace('.000Z', 'Z'),
    max_input_tokens: m.contextWindow,
    max_tokens: m.maxOutputTokens,
    ...gatewayFields(m),
  };
}

/**
 * `GET /v1/models`, shared by OpenAI and Anthropic clients: the Anthropic SDK always sends
 * `anthropic-version`, the OpenAI SDK never does, so that header picks the shape. A key
 * scoped to some models sees only those.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  list(
    @Req() req: GatewayRequest,
    @Headers('anthropic-version') anthropicVersion: string | undefined,
    @Query('limit') limit?: string,
    @Query('after_id') afterId?: string,
    @Query('before_id') beforeId?: string,
  ): object {
    const models = this.catalog.listAvailable().filter((m) => this.visible(req, m.id));
    if (anthropicVersion === undefined) {
      return { object: 'list', data: models.map(toOpenAi) };
    }
    return this.anthropicPage(models, limit, afterId, beforeId);
  }

  @Get(':id')
  get(
    @Req() req: GatewayRequest,
    @Param('id') id: string,
    @Headers('anthropic-version') anthropicVersion: string | undefined,
  ): object {
    const model = this.catalog.find(id);
    if (!model || !model.provider.available || !this.visible(req, id)) {
      throw new ModelNotFoundError(id);
    }
    return anthropicVersion === undefined ? toOpenAi(model) : toAnthropic(model);
  }

  private visible(req: GatewayRequest, model: string): boolean {
    return keyMayUseModel(req.ctx.key, model);
  }

  private anthropicPage(
    models: CatalogModel[],
    limitParam: string | undefined,
    afterId: string | undefined,
    beforeId: string | undefined,
  ): object {
    const parsed = Number(limitParam ?? 20);
    const limit = Number.isInteger(parsed) ? Math.min(Math.max(parsed, 1), 1000) : 20;
    let start = 0;
    let end = models.length;
    const backwards = afterId === undefined && beforeId !== undefined;
    // An unknown cursor yields an empty last page rather than restarting from the top.
    if (afterId !== undefined) {
      const at = models.findIndex((m) => m.id === afterId);
      start = at < 0 ? models.length : at + 1;
    } else if (beforeId !== undefined) {
      end = Math.max(
        models.findIndex((m) => m.id === beforeId),
        0,
      );
      start = Math.max(end - limit, 0);
    }
    const page = models.slice(start, Math.min(start + limit, end)).map(toAnthropic);
    return {
      data: page,
      // Paging backwards, "more" lies before the page; forwards, after it.
      has_more: backwards ? start > 0 : start + page.length < end,
      first_id: page[0]?.id ?? null,
      last_id: page[page.length - 1]?.id ?? null,
    };
  }
}
