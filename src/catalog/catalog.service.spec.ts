import {
  ModelNotFoundError,
  ModelNotSupportedError,
  ProviderUnavailableError,
} from '../common/errors/gateway-errors';
import type { WireFormat } from '../core/canonical';
import { CatalogService } from './catalog.service';
import type { Catalog, CatalogModel, CatalogProvider } from './catalog.types';
import { thrown } from '../testing/thrown';

function provider(name: string, available: boolean, apiKeyEnv?: string): CatalogProvider {
  return {
    name,
    kind: 'openai',
    baseUrl: 'https://x.test',
    apiKey: available ? 'k' : undefined,
    apiKeyEnv,
    headers: {},
    available,
  };
}

function model(id: string, p: CatalogProvider, endpoints: WireFormat[]): CatalogModel {
  return {
    id,
    upstreamId: id,
    provider: p,
    family: 'openai',
    displayName: id,
    created: 0,
    contextWindow: 1000,
    maxOutputTokens: 100,
    pricing: { input: 0, output: 0 },
    capabilities: { reasoning: false, tools: false, vision: false },
    endpoints: new Set(endpoints),
    upstreamApi: 'chat_completions',
  };
}

describe('CatalogService', () => {
  const up = provider('up', true, 'UP_KEY');
  const down = provider('down', false, 'DOWN_KEY');
  const all = model('all', up, ['chat_completions', 'responses', 'messages']);
  const chatOnly = model('chat-only', up, ['chat_completions']);
  const noResponses = model('no-responses', up, ['chat_completions', 'messages']);
  const unconfigured = model('unconfigured', down, ['chat_completions', 'messages']);
  const catalog: Catalog = {
    providers: new Map([
      ['up', up],
      ['down', down],
    ]),
    models: new Map([all, chatOnly, unconfigured, noResponses].map((m) => [m.id, m])),
  };
  const service = new CatalogService(catalog);

  describe('resolve', () => {
    it('returns a model its endpoint accepts and whose provider is available', () => {
      expect(service.resolve('all', 'responses')).toBe(all);
      expect(service.resolve('chat-only', 'chat_completions')).toBe(chatOnly);
    });

    it('throws a 404 ModelNotFoundError for an unknown model', () => {
      const err = thrown(() => service.resolve('gpt-unknown', 'chat_completions'));
      expect(err).toBeInstanceOf(ModelNotFoundError);
      expect(err).toMatchObject({ status: 404, param: 'model', code: 'model_not_found' });
      expect((err as Error).message).toContain("'gpt-unknown'");
    });

    it('throws a 400 ModelNotSupportedError naming the endpoints that serve the model', () => {
      const err = thrown(() => service.resolve('no-responses', 'responses'));
      expect(err).toBeInstanceOf(ModelNotSupportedError);
      expect(err).toMatchObject({ status: 400, param: 'model', code: 'model_not_supported' });
      expect((err as Error).message).toBe(
        "The model 'no-responses' is not supported on /v1/responses. Use /v1/chat/completions or /v1/messages instead.",
      );
    });

    it('names a single alternative endpoint alone', () => {
      const err = thrown(() => service.resolve('chat-only', 'messages'));
      expect(err).toBeInstanceOf(ModelNotSupportedError);
      expect((err as Error).message).toContain('on /v1/messages.');
      expect((err as Error).message).toContain('Use /v1/chat/completions instead.');
    });

    it('throws a 503 ProviderUnavailableError naming the missing key variable', () => {
      const err = thrown(() => service.resolve('unconfigured', 'chat_completions'));
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect(err).toMatchObject({ status: 503, code: 'provider_not_configured' });
      expect((err as Error).message).toContain("'down'");
      expect((err as Error).message).toContain('DOWN_KEY');
    });

    it('reports an unsupported endpoint before an unavailable provider', () => {
      expect(thrown(() => service.resolve('unconfigured', 'responses'))).toBeInstanceOf(
        ModelNotSupportedError,
      );
    });
  });

  it('lists only models whose provider is available, in catalog order', () => {
    expect(service.listAvailable().map((m) => m.id)).toEqual(['all', 'chat-only', 'no-responses']);
  });

  it('finds a model by id without checking availability', () => {
    expect(service.find('unconfigured')).toBe(unconfigured);
    expect(service.find('nope')).toBeUndefined();
  });

  it('counts every catalog model and lists every provider', () => {
    expect(service.size).toBe(4);
    expect([...service.providers()].map((p) => p.name)).toEqual(['up', 'down']);
  });
});
