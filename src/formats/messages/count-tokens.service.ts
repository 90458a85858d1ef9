import { Injectable } from '@nestjs/common';
import { CatalogService } from '../../catalog/catalog.service';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { estimatePromptTokens } from '../../limits/tokens/token-estimator';
import { withoutProtectionTools } from '../../policy/protections/protection-facts';
import { ProtectionRegistry } from '../../policy/protections/protection-registry';
import { createCallContext } from '../../upstream/call-context';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { resolveModel } from '../shared/canonical-path';
import type { CountTokensRequestDto } from './messages-request.dto';
import { messagesLimitFacts } from './messages.limits';
import { messagesProtections } from './messages.protections';

/** Serves POST /v1/messages/count_tokens. */
@Injectable()
export class CountTokensService {
  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    private readonly protections: ProtectionRegistry,
  ) {}

  /**
   * A provider that counts exactly (Anthropic) is asked; for every other model the
   * answer is the same bounded tokenizer estimate the request limits use
   * (src/limits/tokens/token-estimator.ts).
   */
  async countTokens(
    body: CountTokensRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<unknown> {
    const { model, provider } = resolveModel(
      this.catalog,
      this.providers,
      'messages',
      body.model,
      req,
    );
    // Protection tools never reach the model, so they count no tokens.
    const stripped = withoutProtectionTools(
      body,
      messagesProtections.tools(body, this.protections.toolNames()),
    ) as CountTokensRequestDto | undefined;
    const counted = stripped ?? body;
    if (provider.countTokens) {
      const payload =
        stripped === undefined && model.upstreamId === body.model && req.rawBody
          ? req.rawBody
          : JSON.stringify({ ...counted, model: model.upstreamId });
      return provider.countTokens(payload, createCallContext(req, res));
    }
    return { input_tokens: estimatePromptTokens(messagesLimitFacts(counted), model.family) };
  }
}
