import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { REPLIES, translationCatalog, type UpstreamKind } from './support/translation-fixtures';

/**
 * Regression cases of hostile request JSON (explicit nulls, prototype-named keys, a
 * byte-order mark) and of routing before authentication, each through the real gateway.
 */

const SYSTEM = 'Be brief.';
const chat = (model: string, extra: string): string =>
  `{"model":"${model}","messages":[{"role":"system","content":"${SYSTEM}"},{"role":"user","content":"hi"}]${extra}}`;
const messages = (model: string, extra: string): string =>
  `{"model":"${model}","max_tokens":20,"system":"${SYSTEM}","messages":[{"role":"user","content":"hi"}]${extra}}`;
const responses = (model: string, extra: string): string =>
  `{"model":"${model}","instructions":"${SYSTEM}","input":"hi"${extra}}`;

describe('hostile request JSON', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    const reply = (kind: UpstreamKind) => (req: { body: any }) =>
      REPLIES[kind]([{ type: 'text', text: 'ok' }], req.body?.stream === true);
    upstream
      .on('/v1/messages', reply('anthropic'))
      .on('/v1/responses', reply('responses'))
      .on('/v1/chat/completions', reply('chat'))
      .on('/vllm/v1/chat/completions', reply('chat'));
    gw = await startGateway({ CATALOG_PATH: translationCatalog(upstream.url) });
  });

  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function post(
    path: string,
    body: string | Buffer,
    key: string | null = TEST_KEY,
  ): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    };
    if (key !== null) {
      headers.authorization = `Bearer ${key}`;
    }
    const res = await fetch(gw.origin + path, { method: 'POST', headers, body });
    return { status: res.status, body: await res.json() };
  }

  it.each(['thinking', 'tool_choice', 'metadata', 'stop_sequences', 'tools'])(
    'answers /v1/messages with "%s": null by a 400 naming the field (the API accepts no null there)',
    async (field) => {
      const res = await post('/v1/messages', messages('claude-t', `,"${field}":null`));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining(`'${field}'`) },
      });
    },
  );

  it.each(['tool_choice', 'metadata', 'stop', 'temperature', 'reasoning_effort', 'tools'])(
    'treats chat "%s": null as absent, as the OpenAI API does',
    async (field) => {
      const res = await post('/v1/chat/completions', chat('claude-t', `,"${field}":null`));
      expect(res.status).toBe(200);
    },
  );

  it.each([
    ['/v1/chat/completions', chat('x', '').replace('"model":"x",', '')],
    ['/v1/responses', responses('x', '').replace('"model":"x",', '')],
    ['/v1/messages', messages('x', '').replace('"model":"x",', '')],
  ])('keeps validating %s when the body has a top-level "constructor" key', async (path, body) => {
    const res = await post(path, body.replace(/^\{/, '{"constructor":1,'));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("Missing required parameter: 'model'");
  });

  it('still requires max_tokens on /v1/messages beside a "constructor" key', async () => {
    const body = `{"constructor":1,"model":"claude-t","system":"s","messages":[{"role":"user","content":"hi"}]}`;
    const res = await post('/v1/messages', body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("Missing required parameter: 'max_tokens'.");
  });

  it.each([
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
    'toLocaleString',
    'toString',
    'constructor',
    'isPrototypeOf',
  ])('serves a chat request for a Claude model with a "%s" field', async (field) => {
    upstream.requests.length = 0;
    const res = await post('/v1/chat/completions', chat('claude-t', `,"${field}":1`));
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('ok');
    // Unknown to the target, so dropped, and never a prototype member of the upstream body.
    expect(Object.keys(upstream.last().body)).not.toContain(field);
  });

  it.each([
    ['/v1/responses', (model: string) => responses(model, ',"valueOf":1,"__proto__":{"n":2}')],
    ['/v1/messages', (model: string) => messages(model, ',"valueOf":1,"__proto__":{"n":2}')],
  ])('serves %s translated onto chat with prototype-named fields', async (path, body) => {
    const res = await post(path, body('gpt-chat-t'));
    expect(res.status).toBe(200);
  });

  it.each(['__proto__', 'constructor', 'toString'])(
    'forwards a {"type": "%s"} content block on /v1/messages instead of failing',
    async (type) => {
      const body = `{"model":"claude-t","max_tokens":5,"system":"s","messages":[{"role":"user","content":[{"type":"${type}"}]}]}`;
      const res = await post('/v1/messages', body);
      expect(res.status).toBeLessThan(500);
    },
  );

  it('strips a byte-order mark before relaying the raw body upstream', async () => {
    upstream.requests.length = 0;
    const raw = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(chat('vllm-t', ',"temperature":0.5')),
    ]);
    const res = await post('/v1/chat/completions', raw);
    expect(res.status).toBe(200);
    const sent = upstream.last();
    expect(sent.raw.charCodeAt(0)).not.toBe(0xfeff);
    expect(sent.body.temperature).toBe(0.5);
  });

  it.each([
    ['without a key', null],
    ['with a wrong key', 'wrong-key-0123456789'],
    ['with a valid key', TEST_KEY],
  ])('answers an unknown path %s with 404', async (_label, key) => {
    const res = await post('/v1/nope', '{}', key);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
  });

  it('answers an unknown path under /v1/messages with 404 in the Anthropic envelope', async () => {
    const res = await post('/v1/messages/nope', '{}', null);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('still answers 401 on an existing path without a key, without reading the body', async () => {
    const res = await post('/v1/chat/completions', '{not json', null);
    expect(res.status).toBe(401);
    expect(res.body.error.type).toBe('invalid_request_error');
  });
});
