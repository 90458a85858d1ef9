import type { CatalogModel } from '../../catalog/catalog.types';
import type { UpstreamProvider } from '../../upstream/provider.interface';

/**
 * How a `/v1/responses` request for a model is served:
 * - `passthrough`: the provider's own Responses API (`POST {base}/responses`), for models
 *   whose catalog `upstream_api` is `responses`, and for every model of an `openai`-kind
 *   provider (OpenAI's API serves the Responses API for all its models, so its
 *   `upstream_api: chat_completions` default only matters to the other formats);
 * - `local`: the embedded model, through the canonical encoder;
 * - `unsupported`: another upstream API, which needs a translator (a later issue).
 */
export type ResponsesRoute = 'passthrough' | 'local' | 'unsupported';

export function responsesRoute(model: CatalogModel, provider: UpstreamProvider): ResponsesRoute {
  if (model.upstreamApi === 'local') {
    return provider.generate ? 'local' : 'unsupported';
  }
  const native =
    model.upstreamApi === 'responses' ||
    (model.upstreamApi === 'chat_completions' && provider.config.kind === 'openai');
  return native && provider.passthrough ? 'passthrough' : 'unsupported';
}
