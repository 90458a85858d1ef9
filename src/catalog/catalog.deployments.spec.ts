import 'reflect-metadata';
import { PROVIDER_KINDS } from '../testing/provider-kinds';
import { CatalogError, parseCatalog } from './catalog.loader';

const PROVIDERS = `
providers:
  - name: openai
    kind: openai
    base_url: https://a.test/v1
    retry: { attempts: 4, backoff_ms: 50 }
    timeouts: { first_byte_ms: 2000 }
  - name: openai-eu
    kind: openai
    base_url: https://b.test/v1
  - name: claude
    kind: anthropic
    base_url: https://c.test
`;

const MODEL = `
    family: openai
    context_window: 1000
    max_output_tokens: 100
    pricing: { input: 1, output: 2 }`;

function parse(models: string): ReturnType<typeof parseCatalog> {
  return parseCatalog(`${PROVIDERS}models:\n${models}`, {}, 'test.yaml', PROVIDER_KINDS);
}

function problems(models: string): string[] {
  try {
    parse(models);
  } catch (e) {
    return (e as CatalogError).problems;
  }
  throw new Error('expected a CatalogError');
}

describe('catalog deployments, fallbacks, retry and timeouts', () => {
  it('serves a model through its first deployment that has a key, not its first entry', () => {
    const text = `
providers:
  - { name: azure, kind: openai, base_url: https://a.test/v1, api_key_env: AZURE_KEY }
  - { name: openai, kind: openai, base_url: https://b.test/v1, api_key_env: OPENAI_KEY }
models:
  - id: gpt-4.1
    deployments:
      - { provider: azure, upstream_id: gpt-4.1-az }
      - { provider: openai, upstream_id: gpt-4.1 }${MODEL}`;
    const catalog = parseCatalog(text, { OPENAI_KEY: 'sk-x' }, 'test.yaml', PROVIDER_KINDS);
    const model = catalog.models.get('gpt-4.1');
    expect(model?.provider.name).toBe('openai');
    expect(model?.provider.available).toBe(true);
    expect(model?.upstreamId).toBe('gpt-4.1');
  });

  it('reads the contract of the README: several weighted deployments and fallbacks', () => {
    const catalog = parse(`
  - id: gpt-4.1
    deployments:
      - { provider: openai, upstream_id: gpt-4.1, weight: 2 }
      - { provider: openai-eu, upstream_id: gpt-4.1-eu, weight: 1 }
    fallbacks: [other]
    retry: { attempts: 2 }
    timeouts: { total_ms: 9000 }${MODEL}
  - id: other
    provider: openai${MODEL}`);
    const model = catalog.models.get('gpt-4.1');
    expect(model?.provider.name).toBe('openai');
    expect(model?.upstreamId).toBe('gpt-4.1');
    expect(model?.deployments?.map((d) => [d.provider.name, d.upstreamId, d.weight])).toEqual([
      ['openai', 'gpt-4.1', 2],
      ['openai-eu', 'gpt-4.1-eu', 1],
    ]);
    expect(model?.fallbacks).toEqual(['other']);
    expect(model?.retry).toEqual({ attempts: 2 });
    expect(model?.timeouts).toEqual({ totalMs: 9000 });
    expect(model?.provider.retry).toEqual({ attempts: 4, backoffMs: 50 });
    expect(model?.provider.timeouts).toEqual({ firstByteMs: 2000 });
    // One deployment stays the simple case.
    expect(catalog.models.get('other')?.deployments).toBeUndefined();
  });

  it('rejects both provider and deployments, unknown providers, a foreign API and unknown fallbacks', () => {
    expect(
      problems(`
  - id: a
    provider: openai
    deployments: [{ provider: openai }]${MODEL}
  - id: b
    deployments: [{ provider: openai }, { provider: nowhere }]${MODEL}
  - id: c
    deployments: [{ provider: openai }, { provider: claude }]
    fallbacks: [c, missing]${MODEL}`),
    ).toEqual([
      'models[0]: set exactly one of provider or deployments',
      "models[1].deployments[1].provider: unknown provider 'nowhere'",
      "models[2].deployments[1].provider: kind 'anthropic' does not speak chat_completions",
      "models[2].fallbacks[0]: 'c' is not another catalog model",
      "models[2].fallbacks[1]: 'missing' is not another catalog model",
    ]);
  });

  it("reads a deployment's own limits, and keeps a one-entry list that has them", () => {
    const catalog = parse(`
  - id: limited
    deployments:
      - { provider: openai, limits: { max_concurrent: 4, requests_per_minute: 60, tokens_per_minute: 9000 } }${MODEL}
  - id: plain
    deployments: [{ provider: openai }]${MODEL}`);
    expect(catalog.models.get('limited')?.deployments?.map((d) => d.limits)).toEqual([
      { maxConcurrent: 4, requestsPerMinute: 60, tokensPerMinute: 9000 },
    ]);
    expect(catalog.models.get('plain')?.deployments).toBeUndefined();
    expect(
      problems(`
  - id: bad
    deployments: [{ provider: openai, limits: { max_concurrent: 0 } }]${MODEL}`),
    ).toEqual([expect.stringMatching(/max_concurrent/)]);
  });

  it('rejects retry and timeout values that make no sense', () => {
    expect(
      problems(`
  - id: a
    provider: openai
    retry: { attempts: 0 }
    timeouts: { idle_ms: -1 }${MODEL}`),
    ).toEqual([
      expect.stringMatching(/^models\[0\]\.retry\.attempts: /),
      expect.stringMatching(/^models\[0\]\.timeouts\.idle_ms: /),
    ]);
  });
});
