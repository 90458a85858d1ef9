import { FakeUpstream } from './support/fake-upstream';
import {
  adminKeysFile,
  startGateway,
  TEST_KEY,
  writeCatalog,
  type TestGateway,
} from './support/gateway';

describe('rate limits on stored-response replays', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    const catalog = writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: '${upstream.url}/v1', api_key_env: TEST_UPSTREAM_KEY }
models:
  - { id: test-gpt, provider: fake-openai, family: openai, context_window: 8000, max_output_tokens: 1000, pricing: { input: 1, output: 1 } }
`);
    gw = await startGateway({
      CATALOG_PATH: catalog,
      // resp_1 was made upstream, not through the gateway: only an admin key reaches it.
      GATEWAY_KEYS_FILE: adminKeysFile(),
      REDIS_URL: '',
      RATE_LIMIT_MAX_CONCURRENT_STREAMS: '1',
      RATE_LIMIT_TOKENS_PER_MINUTE: '100',
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  const replay = (signal?: AbortSignal): Promise<Response> =>
    fetch(`${gw.baseURL}/responses/resp_1?stream=true&model=test-gpt`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
      signal,
    });

  it('holds a stream slot while a replay streams, and charges it no tokens', async () => {
    upstream.on('/v1/responses/resp_1', () => ({
      sse: [{ event: 'response.created', data: { type: 'response.created', sequence_number: 0 } }],
      after: 'hold',
    }));
    const first = new AbortController();
    const open = await replay(first.signal);
    expect(open.status).toBe(200);
    // A token budget of 100 would refuse any request that reserved tokens.
    expect(open.headers.get('x-ratelimit-limit-tokens')).toBeNull();

    const second = await replay();
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });

    first.abort();
    await upstream.last().ended;
    upstream.on('/v1/responses/resp_1', () => ({
      sse: [{ event: 'response.created', data: { type: 'response.created', sequence_number: 0 } }],
    }));
    const third = await replay();
    expect(third.status).toBe(200);
    await third.text();
  });
});
