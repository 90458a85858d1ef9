import 'reflect-metadata';
import { join } from 'node:path';
import { PROVIDER_KINDS } from '../testing/provider-kinds';
import { CatalogError, loadCatalog, parseCatalog } from './catalog.loader';

const GOOD = `
providers:
  - name: oa
    kind: openai
    base_url: https://api.example.com/v1/
    base_url_env: OA_BASE_URL
    api_key_env: OA_KEY
    headers: { x-org: acme }
  - name: an
    kind: anthropic
    base_url: https://anthropic.example.com
    api_key_env: AN_KEY
    anthropic_version: '2023-06-01'
  - name: compat
    kind: openai-compatible
    base_url: http://localhost:8000/v1
  - name: loc
    kind: local
models:
  - id: m-openai
    provider: oa
    family: openai
    display_name: Model OpenAI
    created: '2025-08-07'
    context_window: 400000
    max_output_tokens: 128000
    pricing: { input: 1.25, output: 10, cached_input: 0.125 }
    capabilities: { reasoning: true, tools: true }
  - id: m-claude
    provider: an
    upstream_id: claude-x-20250101
    family: anthropic
    context_window: 200000
    max_output_tokens: 64000
    pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }
  - id: m-compat
    provider: compat
    family: llama
    context_window: 8000
    max_output_tokens: 1000
    pricing: { input: 0, output: 0 }
  - id: m-local
    provider: loc
    family: openai
    context_window: 1000
    max_output_tokens: 100
    pricing: { input: 0, output: 0 }
  - id: m-responses-only
    provider: oa
    family: openai
    context_window: 1000
    max_output_tokens: 100
    pricing: { input: 1, output: 2 }
    endpoints: [responses]
    upstream_api: responses
`;

const KEYS = { OA_KEY: 'sk-oa', AN_KEY: 'sk-an' };

/** A one-provider, one-model catalog with `model` lines appended to the model entry. */
function oneModel(
  modelLines: string,
  providerLines = 'kind: openai\n    base_url: https://x.test',
): string {
  return `
providers:
  - name: p
    ${providerLines}
models:
  - id: m
    provider: p
    context_window: 1000
    max_output_tokens: 100
    pricing: { input: 1, output: 2 }
${modelLines
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`;
}

function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseCatalog(text, env, 'test.yaml', PROVIDER_KINDS);
  } catch (e) {
    if (e instanceof CatalogError) {
      return e.problems;
    }
    throw e;
  }
  throw new Error('expected parseCatalog to throw a CatalogError');
}

describe('parseCatalog', () => {
  describe('on a valid file', () => {
    const catalog = parseCatalog(GOOD, KEYS, 'good.yaml', PROVIDER_KINDS);

    it('keeps every provider and model, in file order', () => {
      expect([...catalog.providers.keys()]).toEqual(['oa', 'an', 'compat', 'loc']);
      expect([...catalog.models.keys()]).toEqual([
        'm-openai',
        'm-claude',
        'm-compat',
        'm-local',
        'm-responses-only',
      ]);
    });

    it('resolves provider settings, stripping the trailing slash of base_url', () => {
      expect(catalog.providers.get('oa')).toEqual({
        name: 'oa',
        kind: 'openai',
        baseUrl: 'https://api.example.com/v1',
        apiKey: 'sk-oa',
        apiKeyEnv: 'OA_KEY',
        headers: { 'x-org': 'acme' },
        settings: {},
        available: true,
      });
      expect(catalog.providers.get('an')).toMatchObject({
        kind: 'anthropic',
        baseUrl: 'https://anthropic.example.com',
        apiKey: 'sk-an',
        settings: { anthropic_version: '2023-06-01' },
        headers: {},
        available: true,
      });
    });

    it('converts a model entry to the runtime shape', () => {
      const m = catalog.models.get('m-openai')!;
      expect(m).toMatchObject({
        id: 'm-openai',
        upstreamId: 'm-openai',
        family: 'openai',
        displayName: 'Model OpenAI',
        created: Date.UTC(2025, 7, 7) / 1000,
        contextWindow: 400000,
        maxOutputTokens: 128000,
        pricing: { input: 1.25, output: 10, cachedInput: 0.125, cacheWrite: undefined },
        capabilities: { reasoning: true, tools: true, vision: false },
        upstreamApi: 'chat_completions',
      });
      expect(m.provider).toBe(catalog.providers.get('oa'));
    });

    it('keeps an explicit upstream_id and defaults display name and created', () => {
      const m = catalog.models.get('m-claude')!;
      expect(m.upstreamId).toBe('claude-x-20250101');
      expect(m.displayName).toBe('m-claude');
      expect(m.created).toBe(0);
      expect(m.pricing).toEqual({ input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 });
      expect(m.capabilities).toEqual({ reasoning: false, tools: false, vision: false });
    });

    it('serves the openai family on all three endpoints by default', () => {
      expect([...catalog.models.get('m-openai')!.endpoints].sort()).toEqual([
        'chat_completions',
        'messages',
        'responses',
      ]);
    });

    it('serves the responses endpoint to another family only when the model lists it', () => {
      const text = oneModel('family: anthropic\nendpoints: [messages, responses]');
      const listed = parseCatalog(text, {}, 'catalog', PROVIDER_KINDS).models.get('m');
      expect([...listed!.endpoints]).toEqual(['messages', 'responses']);
      const byDefault = parseCatalog(oneModel('family: anthropic'), {}, 'catalog', PROVIDER_KINDS);
      expect(byDefault.models.get('m')!.endpoints.has('responses')).toBe(false);
    });

    it('reads a model response cache ttl, absent when the model sets none', () => {
      const cached = parseCatalog(
        oneModel('family: openai\ncache: { ttl_s: 300 }'),
        {},
        'c',
        PROVIDER_KINDS,
      );
      expect(cached.models.get('m')!.cacheTtlS).toBe(300);
      const plain = parseCatalog(oneModel('family: openai'), {}, 'c', PROVIDER_KINDS);
      expect(plain.models.get('m')!.cacheTtlS).toBeUndefined();
      expect(problemsOf(oneModel('family: openai\ncache: { ttl_s: -1 }'))).toEqual([
        expect.stringMatching(/ttl_s/),
      ]);
    });

    it('serves other families on chat completions and messages by default', () => {
      for (const id of ['m-claude', 'm-compat']) {
        expect([...catalog.models.get(id)!.endpoints].sort()).toEqual([
          'chat_completions',
          'messages',
        ]);
      }
    });

    it('keeps an explicit endpoints list', () => {
      const m = catalog.models.get('m-responses-only')!;
      expect([...m.endpoints]).toEqual(['responses']);
      expect(m.upstreamApi).toBe('responses');
    });

    it('defaults upstream_api from the provider kind', () => {
      expect(catalog.models.get('m-claude')!.upstreamApi).toBe('messages');
      expect(catalog.models.get('m-compat')!.upstreamApi).toBe('chat_completions');
      expect(catalog.models.get('m-local')!.upstreamApi).toBe('local');
    });
  });

  describe('provider environment', () => {
    it('overrides base_url with the variable named by base_url_env', () => {
      const catalog = parseCatalog(
        GOOD,
        { ...KEYS, OA_BASE_URL: 'http://127.0.0.1:4010/v1//' },
        'catalog',
        PROVIDER_KINDS,
      );
      expect(catalog.providers.get('oa')!.baseUrl).toBe('http://127.0.0.1:4010/v1');
    });

    it('keeps base_url when the base_url_env variable is empty', () => {
      const catalog = parseCatalog(GOOD, { ...KEYS, OA_BASE_URL: '' }, 'catalog', PROVIDER_KINDS);
      expect(catalog.providers.get('oa')!.baseUrl).toBe('https://api.example.com/v1');
    });

    it('rejects a base_url_env value that is not an http(s) URL', () => {
      expect(problemsOf(GOOD, { ...KEYS, OA_BASE_URL: 'localhost:4010' })).toEqual([
        expect.stringMatching(/^providers\[0\]\.base_url_env: OA_BASE_URL/),
      ]);
    });

    it('marks openai and anthropic providers without a key unavailable', () => {
      const catalog = parseCatalog(GOOD, {}, 'catalog', PROVIDER_KINDS);
      expect(catalog.providers.get('oa')).toMatchObject({ apiKey: undefined, available: false });
      expect(catalog.providers.get('an')).toMatchObject({ apiKey: undefined, available: false });
    });

    it('treats an empty key variable as unset', () => {
      const catalog = parseCatalog(
        GOOD,
        { OA_KEY: '', AN_KEY: 'sk-an' },
        'catalog',
        PROVIDER_KINDS,
      );
      expect(catalog.providers.get('oa')!.available).toBe(false);
      expect(catalog.providers.get('an')!.available).toBe(true);
    });

    it('keeps openai-compatible and local providers available without a key', () => {
      const catalog = parseCatalog(GOOD, {}, 'catalog', PROVIDER_KINDS);
      expect(catalog.providers.get('compat')!.available).toBe(true);
      expect(catalog.providers.get('loc')!.available).toBe(true);
    });

    it('requires a base URL for a non-local provider', () => {
      const text = oneModel('family: openai', 'kind: openai\n    base_url_env: P_URL');
      expect(problemsOf(text)).toEqual([expect.stringMatching(/^providers\[0\]\.base_url: /)]);
      expect(() =>
        parseCatalog(text, { P_URL: 'https://p.test' }, 'catalog', PROVIDER_KINDS),
      ).not.toThrow();
    });
  });

  describe('rejects', () => {
    it('invalid YAML', () => {
      const problems = problemsOf('providers: [\n  - name: x\nmodels: {');
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^not valid YAML/);
    });

    it.each([
      ['a list', '- a\n- b\n'],
      ['a scalar', 'just text\n'],
      ['an empty file', ''],
    ])('a file that is %s instead of a mapping', (_what, text) => {
      expect(problemsOf(text)).toEqual([expect.stringContaining('must be a mapping')]);
    });

    it('a file without providers or models', () => {
      const problems = problemsOf('something: else\n');
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^providers: /),
          expect.stringMatching(/^models: /),
        ]),
      );
    });

    it('a bad nested field, naming its path', () => {
      const text = GOOD.replace(
        'pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }',
        'pricing: { input: -3, output: 15 }',
      );
      expect(problemsOf(text, KEYS)).toEqual([
        expect.stringMatching(/^models\[1\]\.pricing\.input: /),
      ]);
    });

    it('every schema problem of the file at once', () => {
      const text = GOOD.replace('kind: anthropic', 'kind: bedrock')
        .replace('context_window: 8000', 'context_window: 0')
        .replace('family: llama', 'family: Llama 3');
      const problems = problemsOf(text, KEYS);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^providers\[1\]\.kind: /),
          expect.stringMatching(/^models\[2\]\.context_window: /),
          expect.stringMatching(/^models\[2\]\.family: /),
        ]),
      );
      expect(problems).toHaveLength(3);
    });

    it('a model id with a slash', () => {
      expect(problemsOf(oneModel('family: openai').replace('id: m', 'id: org/m'))).toEqual([
        expect.stringMatching(/^models\[0\]\.id: id must not contain spaces/),
      ]);
    });

    it('an unknown endpoint name', () => {
      expect(
        problemsOf(oneModel('family: openai\nendpoints: [chat_completions, embeddings]')),
      ).toEqual([expect.stringMatching(/^models\[0\]\.endpoints: /)]);
    });

    it('a model referring to an unknown provider', () => {
      const text = GOOD.replace('provider: compat', 'provider: nowhere');
      expect(problemsOf(text, KEYS)).toEqual(["models[2].provider: unknown provider 'nowhere'"]);
    });

    it('duplicate model ids', () => {
      const text = GOOD.replace('id: m-compat', 'id: m-openai');
      expect(problemsOf(text, KEYS)).toEqual(["models[2].id: duplicate model 'm-openai'"]);
    });

    it('duplicate provider names', () => {
      const text = GOOD.replace('name: compat', 'name: oa');
      const problems = problemsOf(text, KEYS);
      expect(problems).toContain("providers[2].name: duplicate provider 'oa'");
    });

    it('an upstream_api of local on a remote provider, and the reverse', () => {
      expect(problemsOf(oneModel('family: openai\nupstream_api: local'))).toEqual([
        expect.stringMatching(
          /^models\[0\]\.upstream_api: 'local' does not fit provider kind 'openai'/,
        ),
      ]);
      expect(
        problemsOf(oneModel('family: openai\nupstream_api: chat_completions', 'kind: local')),
      ).toEqual([expect.stringMatching(/^models\[0\]\.upstream_api: /)]);
    });

    it('max_output_tokens larger than context_window', () => {
      const text = GOOD.replace('max_output_tokens: 1000', 'max_output_tokens: 9000');
      expect(problemsOf(text, KEYS)).toEqual([
        'models[2].max_output_tokens: larger than context_window',
      ]);
    });

    it('names the source in the error message', () => {
      let caught: unknown;
      try {
        parseCatalog('- a', {}, 'my/catalog.yaml', PROVIDER_KINDS);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(CatalogError);
      expect((caught as CatalogError).source).toBe('my/catalog.yaml');
      expect((caught as CatalogError).message).toContain('my/catalog.yaml');
    });

    it('an impossible created date', () => {
      expect(problemsOf(oneModel("family: openai\ncreated: '2025-13-45'"))).toEqual([
        expect.stringMatching(/^models\[0\]\.created/),
      ]);
    });

    it('a date that does not exist even though its fields are in range', () => {
      expect(problemsOf(oneModel("family: openai\ncreated: '2025-02-30'"))).toEqual([
        expect.stringMatching(/^models\[0\]\.created: '2025-02-30' is not a real date/),
      ]);
    });

    it('a misspelled key instead of ignoring it', () => {
      expect(problemsOf(oneModel('family: openai\nupstream_idd: x'))).toEqual([
        expect.stringMatching(/^models\[0\]\.upstream_idd: property upstream_idd should not exist/),
      ]);
    });

    it('an upstream API the provider kind does not speak', () => {
      const text = oneModel(
        'family: anthropic\nupstream_api: chat_completions',
        'kind: anthropic\n    base_url: https://x.test',
      );
      expect(problemsOf(text)).toEqual([
        expect.stringMatching(
          /^models\[0\]\.upstream_api: 'chat_completions' does not fit provider kind 'anthropic' \(use messages\)/,
        ),
      ]);
    });
  });
});

describe('loadCatalog', () => {
  const shipped = join(__dirname, '..', '..', 'config', 'catalog.yaml');

  it('loads the shipped catalog with its local models', () => {
    const catalog = loadCatalog(shipped, PROVIDER_KINDS, {});
    const gpt = catalog.models.get('local-echo-gpt');
    const claude = catalog.models.get('local-echo-claude');
    expect(gpt).toMatchObject({ family: 'openai', upstreamApi: 'local' });
    expect(gpt!.provider).toMatchObject({ kind: 'local', available: true });
    expect(claude).toMatchObject({ family: 'anthropic', upstreamApi: 'local' });
    expect(claude!.endpoints.has('responses')).toBe(false);
    expect(gpt!.endpoints.has('responses')).toBe(true);
  });

  it('marks the shipped remote providers unavailable without keys', () => {
    const catalog = loadCatalog(shipped, PROVIDER_KINDS, {});
    expect(catalog.providers.get('openai')!.available).toBe(false);
    expect(catalog.providers.get('anthropic')!.available).toBe(false);
    const withKeys = loadCatalog(shipped, PROVIDER_KINDS, {
      OPENAI_API_KEY: 'a',
      ANTHROPIC_API_KEY: 'b',
    });
    expect(withKeys.providers.get('openai')!.available).toBe(true);
    expect(withKeys.providers.get('anthropic')!.available).toBe(true);
  });

  it('gives a CatalogError naming the path for a missing file', () => {
    const path = join(__dirname, 'does-not-exist.yaml');
    let caught: unknown;
    try {
      loadCatalog(path, PROVIDER_KINDS, {});
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CatalogError);
    expect((caught as CatalogError).source).toBe(path);
    expect((caught as CatalogError).problems).toEqual([
      expect.stringContaining('cannot read the file: ENOENT'),
    ]);
  });
});
