import OpenAI from 'openai';
import { MetricsServer } from '../src/observability/metrics/metrics-server';
import { chatCompletion, textStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const SYSTEM = { role: 'system' as const, content: 'You are terse.' };

/** The value of one sample line, `name{labels} value`, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) {
      continue;
    }
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

describe('Prometheus metrics', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let metricsPort: number;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({
      CATALOG_PATH: testCatalog(upstream.url),
      METRICS_TOKEN,
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
    });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    metricsPort = gw.app.get(MetricsServer).port as number;
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  const scrape = async (): Promise<string> => {
    const res = await fetch(`${gw.origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  it('is served on the main port only with the metrics token, never with a client key', async () => {
    expect((await fetch(`${gw.origin}/metrics`)).status).toBe(401);
    const withKey = await fetch(`${gw.origin}/metrics`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    expect(withKey.status).toBe(401);
    expect(await withKey.text()).not.toContain('gateway_requests_total');
    expect(await scrape()).toContain('# TYPE gateway_requests_total counter');
  });

  it('is served without a token on METRICS_PORT, which serves nothing else', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/v1/models`)).status).toBe(404);
  });

  it('counts a non-streamed request with its tokens, cost and upstream timings', async () => {
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'Hi') }));
    await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'hello' }],
    });
    const text = await scrape();
    const labels = { endpoint: '/v1/chat/completions', model: 'test-gpt', provider: 'fake-openai' };
    expect(
      sample(text, 'gateway_requests_total', {
        ...labels,
        status_class: '2xx',
        outcome: 'success',
      }),
    ).toBe(1);
    expect(
      sample(text, 'gateway_tokens_total', { model: 'test-gpt', type: 'input' }),
    ).toBeGreaterThan(0);
    expect(
      sample(text, 'gateway_tokens_total', { model: 'test-gpt', type: 'output' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'gateway_cost_usd_total', { model: 'test-gpt' })).toBeGreaterThan(0);
    expect(
      sample(text, 'gateway_overhead_seconds_count', { endpoint: '/v1/chat/completions' }),
    ).toBe(1);
    // The finest bucket exists, so sub-millisecond overhead is resolved.
    expect(text).toContain('gateway_overhead_seconds_bucket{le="0.000025"');
    expect(
      sample(text, 'gateway_upstream_time_to_first_byte_seconds_count', { model: 'test-gpt' }),
    ).toBe(1);
    expect(
      sample(text, 'gen_ai_client_token_usage_count', {
        gen_ai_request_model: 'test-gpt',
        gen_ai_token_type: 'output',
      }),
    ).toBe(1);
    // No per-key label unless METRICS_PER_KEY is on.
    expect(text).not.toContain('key_id=');
  });

  it('times the first token of a stream', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: [...textStream('upstream-gpt-1', ['Hel', 'lo', ' there'], true), '[DONE]'],
    }));
    const stream = await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream) {
      // drain
    }
    const text = await scrape();
    expect(
      sample(text, 'gen_ai_server_time_to_first_token_seconds_count', {
        gen_ai_request_model: 'test-gpt',
      }),
    ).toBe(1);
    expect(
      sample(text, 'gateway_request_duration_seconds_count', { model: 'test-gpt', stream: 'true' }),
    ).toBe(1);
    expect(sample(text, 'gateway_active_streams', {})).toBe(0);
  });

  it('labels unknown paths as unmatched (bounded cardinality) and reports storage health', async () => {
    await fetch(`${gw.origin}/v1/nope/${Math.random()}`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    const text = await scrape();
    expect(
      sample(text, 'gateway_requests_total', { endpoint: 'unmatched', status_class: '4xx' }),
    ).toBe(1);
    expect(sample(text, 'gateway_rate_limit_storage_up', { storage: 'memory' })).toBe(1);
  });
});

describe('Prometheus metrics: rate limits, per-key labels, off by default', () => {
  it('counts rate-limit rejections and labels by key only with METRICS_PER_KEY', async () => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      METRICS_TOKEN,
      METRICS_PER_KEY: 'true',
      RATE_LIMIT_REQUESTS_PER_MINUTE: '1',
    });
    try {
      const call = (): Promise<Response> =>
        fetch(`${gw.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'local-echo-gpt',
            messages: [SYSTEM, { role: 'user', content: 'x' }],
          }),
        });
      expect((await call()).status).toBe(200);
      expect((await call()).status).toBe(429);
      const text = await (
        await fetch(`${gw.origin}/metrics`, {
          headers: { authorization: `Bearer ${METRICS_TOKEN}` },
        })
      ).text();
      expect(
        sample(text, 'gateway_rate_limit_rejections_total', { reason: 'rate_limit_exceeded' }),
      ).toBe(1);
      expect(
        sample(text, 'gateway_requests_total', { model: 'local-echo-gpt', status_class: '2xx' }),
      ).toBe(1);
      expect(text).toMatch(/gateway_requests_total\{[^}]*key_id="[^"]+"/);
    } finally {
      await gw.close();
    }
  });

  it('answers 404 on the main port when no METRICS_TOKEN is set', async () => {
    const gw = await startGateway({ CATALOG_PATH: testCatalog('http://127.0.0.1:9') });
    try {
      expect((await fetch(`${gw.origin}/metrics`)).status).toBe(404);
      expect(gw.app.get(MetricsServer).port).toBeUndefined();
    } finally {
      await gw.close();
    }
  });
});
