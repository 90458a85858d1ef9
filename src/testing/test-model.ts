import type { CatalogModel, ProviderKind, UpstreamApi } from '../catalog/catalog.types';

/** A catalog model for translator specs. */
export function testModel(
  upstreamApi: UpstreamApi,
  overrides: Partial<CatalogModel> = {},
  kind: ProviderKind = upstreamApi === 'messages' ? 'anthropic' : 'openai',
): CatalogModel {
  return {
    id: 'public-model',
    upstreamId: 'upstream-model-1',
    provider: { name: 'p', kind, baseUrl: 'http://upstream', headers: {}, available: true },
    family: kind === 'anthropic' ? 'anthropic' : 'openai',
    displayName: 'Test',
    created: 0,
    contextWindow: 200000,
    maxOutputTokens: 64000,
    pricing: { input: 1, output: 1 },
    capabilities: { reasoning: true, tools: true, vision: true },
    endpoints: new Set(['chat_completions', 'messages']),
    upstreamApi,
    ...overrides,
  };
}
