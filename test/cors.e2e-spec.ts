/**
 * CORS for browser clients: an allowed origin may read the gateway's own answer headers and
 * the rate-limit headers, not only the request id; other origins are not allowed.
 */
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({
    CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
    CORS_ORIGINS: 'https://app.example.org',
  });
});

afterAll(async () => {
  await gw.close();
});

const chat = (origin: string): Promise<Response> =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', origin },
    body: JSON.stringify({
      model: 'local-echo-gpt',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hi' },
      ],
    }),
  });

describe('CORS', () => {
  it("exposes the gateway's answer headers and the rate-limit headers to an allowed origin", async () => {
    const res = await chat('https://app.example.org');
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.org');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',');
    expect(exposed).toEqual(
      expect.arrayContaining([
        'x-request-id',
        'x-gateway-model',
        'x-gateway-protections',
        'x-gateway-dropped-params',
        'x-gateway-cache',
        'x-ratelimit-remaining-requests',
        'anthropic-ratelimit-tokens-remaining',
      ]),
    );
    // What it exposes is what it sends: the model that served is among them.
    expect(res.headers.get('x-gateway-model')).toBe('local-echo-gpt');
  });

  it('does not allow another origin (its browser reads nothing of the answer)', async () => {
    const res = await chat('https://evil.example.net');
    await res.arrayBuffer();
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
