import { Injectable } from '@nestjs/common';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import { own } from '../../../common/own';
import type { ProviderDriver, UpstreamProvider } from '../../provider.interface';
import { UpstreamHttpClient } from '../../upstream-http.client';
import { OPENAI, type OpenAiApi, OpenAiProvider } from '../openai/openai.provider';

/** The GA data-plane version; the Responses API needs a preview one (`api_version`). */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/**
 * `kind: azure-openai`: OpenAI models deployed on an Azure OpenAI resource. `base_url` is the
 * resource endpoint (`https://<resource>.openai.azure.com`), a model's `upstream_id` its
 * deployment name, and `api_version` the `api-version` query parameter of every call.
 */
export const AZURE_OPENAI: ProviderDescriptor = {
  kind: 'azure-openai',
  apis: OPENAI.apis,
  defaultApi: 'chat_completions',
  needsKey: true,
  needsBaseUrl: true,
  settings: [{ key: 'api_version', default: DEFAULT_AZURE_API_VERSION }],
  framing: 'sse',
  reasoningSpendsOutputBudget: true,
};

/**
 * The OpenAI provider with Azure's addressing: chat completions go to the deployment's own
 * URL (the body's `model` is ignored there), the Responses API to the resource's
 * `/openai/responses` with the deployment as `model`; the key goes in `api-key`.
 */
export class AzureOpenAiProvider extends OpenAiProvider {
  private readonly query: string;

  constructor(config: CatalogProvider, http: UpstreamHttpClient) {
    super(config, http, AZURE_OPENAI);
    const version = own(config.settings ?? {}, 'api_version') ?? DEFAULT_AZURE_API_VERSION;
    this.query = `api-version=${encodeURIComponent(version)}`;
  }

  protected override url(api: OpenAiApi, model: CatalogModel): string {
    const base = this.config.baseUrl;
    return api === 'chat_completions'
      ? `${base}/openai/deployments/${encodeURIComponent(model.upstreamId)}/chat/completions?${this.query}`
      : `${base}/openai/responses?${this.query}`;
  }

  protected override resourceUrl(path: string): string {
    return `${this.config.baseUrl}/openai${path}${path.includes('?') ? '&' : '?'}${this.query}`;
  }

  protected override auth(apiKey: string): Record<string, string> {
    return { 'api-key': apiKey };
  }
}

/** Driver for `kind: azure-openai` providers. */
@Injectable()
@ProviderDriverFor(AZURE_OPENAI)
export class AzureOpenAiDriver implements ProviderDriver {
  constructor(private readonly http: UpstreamHttpClient) {}

  create(config: CatalogProvider): UpstreamProvider {
    return new AzureOpenAiProvider(config, this.http);
  }
}
