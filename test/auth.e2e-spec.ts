import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';

describe('client keys are checked before the body is read', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      MAX_BODY_SIZE: '1kb',
    });
  });
  afterAll(() => gw.close());

  const post = (
    path: string,
    body: string,
    headers: Record<string, string> = {},
  ): Promise<Response> =>
    fetch(`${gw.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('answers 401, not 413, to an anonymous body over the limit', async () => {
    const res = await post('/v1/chat/completions', `{"x":"${'a'.repeat(5000)}"}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', code: null },
    });
  });

  it('answers 401 in the Anthropic envelope to anonymous malformed JSON on /v1/messages', async () => {
    const res = await post('/v1/messages', '{bad', { 'x-api-key': 'wrong' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });
  });

  it('still reads the body of an authenticated request and reports its problems', async () => {
    const res = await post('/v1/chat/completions', '{bad', { authorization: `Bearer ${TEST_KEY}` });
    expect(res.status).toBe(400);
    const big = await post('/v1/chat/completions', `{"x":"${'a'.repeat(5000)}"}`, {
      'x-api-key': TEST_KEY,
    });
    expect(big.status).toBe(413);
  });

  it('keeps the health probes public', async () => {
    expect((await fetch(`${gw.origin}/health/ready`)).status).toBe(200);
  });
});
