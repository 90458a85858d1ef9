import Anthropic from '@anthropic-ai/sdk';
import AnthropicLegacy from 'anthropic-sdk-0x';
import OpenAI from 'openai';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';

describe('GET /v1/models and health probes', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({ CATALOG_PATH: testCatalog('http://127.0.0.1:9') });
  });
  afterAll(() => gw.close());

  it('lists the usable models in the OpenAI shape for OpenAI clients', async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      ids.push(model.id);
      expect(model.object).toBe('model');
      expect(typeof model.created).toBe('number');
    }
    expect(ids).toEqual([
      'test-gpt',
      'test-vllm',
      'messages-only',
      'local-echo-gpt',
      'local-echo-claude',
    ]);
    // A model whose provider has no key is not offered.
    expect(ids).not.toContain('no-key-model');
    const one = await client.models.retrieve('local-echo-claude');
    expect(one).toMatchObject({
      id: 'local-echo-claude',
      owned_by: 'anthropic',
      context_window: 200000,
    });
    await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it.each([
    ['1.x', Anthropic, Anthropic.NotFoundError],
    ['0.x', AnthropicLegacy, AnthropicLegacy.NotFoundError],
  ])(
    'lists models in the Anthropic shape for the Anthropic SDK %s',
    async (_line, Sdk, NotFound) => {
      const client = new Sdk({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 }) as Anthropic;
      const ids: string[] = [];
      for await (const model of client.models.list({ limit: 2 })) {
        expect(model.type).toBe('model');
        expect(model.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        ids.push(model.id);
      }
      expect(ids).toEqual([
        'test-gpt',
        'test-vllm',
        'messages-only',
        'local-echo-gpt',
        'local-echo-claude',
      ]);
      const one = await client.models.retrieve('local-echo-gpt');
      expect(one.display_name).toBe('local-echo-gpt');
      const missing = await client.models.retrieve('nope').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(NotFound);
      expect((missing as { error?: { type?: string } }).error).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error' },
      });
    },
  );

  it('requires a key on /v1/models', async () => {
    const res = await fetch(`${gw.baseURL}/models`);
    expect(res.status).toBe(401);
  });

  it('serves the health probes without a key', async () => {
    expect(await (await fetch(`${gw.origin}/health`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gw.origin}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', models: 6 });
  });
});
