import type { CatalogModel, CatalogProvider, UpstreamApi } from '../../catalog/catalog.types';
import type { UpstreamProvider } from '../../upstream/provider.interface';
import { responsesRoute } from './responses.route';

function route(
  kind: CatalogProvider['kind'],
  upstreamApi: UpstreamApi,
  can: { passthrough?: boolean; generate?: boolean } = { passthrough: true },
) {
  const config = { name: 'p', kind } as CatalogProvider;
  const provider = {
    config,
    passthrough: can.passthrough ? jest.fn() : undefined,
    generate: can.generate ? jest.fn() : undefined,
  } as unknown as UpstreamProvider;
  return responsesRoute({ upstreamApi } as CatalogModel, provider);
}

describe('responsesRoute', () => {
  it('takes the fast path for a model served through the Responses API', () => {
    expect(route('openai-compatible', 'responses')).toBe('passthrough');
    expect(route('openai', 'responses')).toBe('passthrough');
  });

  it('takes the fast path for any model of an OpenAI provider, whose API serves /responses', () => {
    expect(route('openai', 'chat_completions')).toBe('passthrough');
  });

  it('does not assume an OpenAI-compatible chat server speaks the Responses API', () => {
    expect(route('openai-compatible', 'chat_completions')).toBe('unsupported');
  });

  it('serves local models through the canonical encoder', () => {
    expect(route('local', 'local', { generate: true })).toBe('local');
  });

  it('leaves a Messages upstream to translation (unsupported for now)', () => {
    expect(route('anthropic', 'messages')).toBe('unsupported');
    expect(route('openai', 'responses', {})).toBe('unsupported');
  });
});
