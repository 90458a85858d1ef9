import type { CatalogModel, UpstreamApi } from '../../catalog/catalog.types';
import type { ProviderDescriptor } from '../../catalog/provider-kind';
import type { WireFormat } from '../../core/canonical';
import type { UpstreamProvider } from '../../upstream/provider.interface';
import { ANTHROPIC } from '../../upstream/providers/anthropic/anthropic.provider';
import { LOCAL } from '../../upstream/providers/local/local.provider';
import { OPENAI, OPENAI_COMPATIBLE } from '../../upstream/providers/openai/openai.provider';
import { servingPath, servesNatively } from './canonical-path';

function provider(
  descriptor: ProviderDescriptor,
  can: { passthrough?: boolean; generate?: boolean } = { passthrough: true, generate: true },
): UpstreamProvider {
  return {
    config: { name: 'p', kind: descriptor.kind, baseUrl: '', headers: {}, available: true },
    descriptor,
    passthrough: can.passthrough ? jest.fn() : undefined,
    generate: can.generate ? jest.fn() : undefined,
  };
}

function model(upstreamApi: UpstreamApi, reasoning = false): CatalogModel {
  return { id: 'm', upstreamApi, capabilities: { reasoning } } as CatalogModel;
}

const native = (format: WireFormat, d: ProviderDescriptor, api: UpstreamApi): boolean =>
  servesNatively(format, model(api), provider(d));

describe('servesNatively (read from the provider descriptors)', () => {
  it('takes the fast path for a model served through the Responses API', () => {
    expect(native('responses', OPENAI_COMPATIBLE, 'responses')).toBe(true);
    expect(native('responses', OPENAI, 'responses')).toBe(true);
  });

  it('takes the fast path for any model of an OpenAI provider, whose API serves /responses', () => {
    expect(native('responses', OPENAI, 'chat_completions')).toBe(true);
    expect(native('chat_completions', OPENAI, 'chat_completions')).toBe(true);
  });

  it('does not assume an OpenAI-compatible chat server speaks the Responses API', () => {
    expect(native('responses', OPENAI_COMPATIBLE, 'chat_completions')).toBe(false);
  });

  it('serves local models through the canonical encoder, and Messages natively only to Anthropic', () => {
    expect(native('responses', LOCAL, 'local')).toBe(false);
    expect(native('messages', ANTHROPIC, 'messages')).toBe(true);
    expect(native('responses', ANTHROPIC, 'messages')).toBe(false);
  });

  it('needs a provider that can pass a body through', () => {
    const m = model('responses');
    expect(servesNatively('responses', m, provider(OPENAI, { generate: true }))).toBe(false);
  });
});

describe('servingPath', () => {
  it('sends a Messages request for an OpenAI reasoning model to the Responses API', () => {
    const path = servingPath('messages', model('chat_completions', true), provider(OPENAI));
    expect(path).toMatchObject({ kind: 'canonical', model: { upstreamApi: 'responses' } });
  });

  it("keeps the model's API for an OpenAI-compatible server", () => {
    const m = model('chat_completions', true);
    const p = provider(OPENAI_COMPATIBLE);
    expect(servingPath('messages', m, p)).toEqual({ kind: 'canonical', model: m, provider: p });
  });

  it('takes the canonical path to the inbound API when protections force it', () => {
    const path = servingPath('responses', model('chat_completions'), provider(OPENAI), true);
    expect(path).toMatchObject({ kind: 'canonical', model: { upstreamApi: 'responses' } });
  });

  it('refuses a route the provider cannot translate', () => {
    const p = provider(ANTHROPIC, { passthrough: true });
    expect(() => servingPath('chat_completions', model('messages'), p)).toThrow(
      /cannot translate to/,
    );
  });
});
