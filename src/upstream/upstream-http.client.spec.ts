import { errors } from 'undici';
import {
  ClientClosedRequestError,
  GatewayError,
  InvalidRequestError,
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamTimeoutError,
} from '../common/errors/gateway-errors';
import { Readable } from 'node:stream';
import { fakeUpstreamConfig } from '../testing/fake-upstream-config';
import { Redactor } from './redactor';
import { upstreamHttpError as readUpstreamError } from './upstream-body';
import { UpstreamHttpClient, UpstreamResponse, mapTransportError } from './upstream-http.client';

/** The error of a response as the client builds it, here without any secret configured. */
const upstreamHttpError = (res: UpstreamResponse, provider: string) =>
  readUpstreamError(res, provider, (text) => text);

function fakeResponse(
  statusCode: number,
  body: string | Error,
  headers: Record<string, string | string[]> = {},
): UpstreamResponse {
  const readable =
    body instanceof Error
      ? new Readable({
          read() {
            this.destroy(body);
          },
        })
      : Readable.from([Buffer.from(body)]);
  return { statusCode, headers, body: readable } as unknown as UpstreamResponse;
}

const openAiError = (message: string, code: string | null, param: string | null) =>
  JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } });

describe('upstreamHttpError', () => {
  it('keeps a 400 with the upstream message, code and param', async () => {
    const err = await upstreamHttpError(
      fakeResponse(400, openAiError('Invalid temperature: 5', 'invalid_value', 'temperature')),
      'openai',
    );
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(err).toMatchObject({
      status: 400,
      kind: 'invalid_request',
      message: 'Invalid temperature: 5',
      code: 'invalid_value',
      param: 'temperature',
    });
  });

  it('reads the message of an Anthropic error body', async () => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: must be at most 64000' },
    });
    const err = await upstreamHttpError(fakeResponse(400, body), 'anthropic');
    expect(err).toMatchObject({
      status: 400,
      message: 'max_tokens: must be at most 64000',
      code: null,
      param: null,
    });
  });

  it.each([
    ['a string error field', JSON.stringify({ error: 'model is required' }), 'model is required'],
    ['a top-level message', JSON.stringify({ message: 'bad things' }), 'bad things'],
    ['plain text', '  upstream says no  ', 'upstream says no'],
    ['an empty body', '', 'HTTP 422'],
  ])('takes the message from %s', async (_what, body, message) => {
    const err = await upstreamHttpError(fakeResponse(422, body), 'p');
    expect(err.status).toBe(422);
    expect(err.message).toBe(message);
  });

  it('keeps a 429 with retry-after and the other retry hints', async () => {
    const err = await upstreamHttpError(
      fakeResponse(429, openAiError('Rate limit reached', null, null), {
        'retry-after': '7',
        'retry-after-ms': '7000',
        'x-should-retry': 'true',
        'x-ratelimit-remaining-requests': '0',
        'set-cookie': ['a=b'],
      }),
      'openai',
    );
    expect(err).toMatchObject({ status: 429, kind: 'rate_limit', code: 'rate_limit_exceeded' });
    expect(err.headers).toEqual({
      'retry-after': '7',
      'retry-after-ms': '7000',
      'x-should-retry': 'true',
    });
  });

  it('keeps the upstream code of a 429 when it gives one', async () => {
    const err = await upstreamHttpError(
      fakeResponse(429, openAiError('Quota', 'insufficient_quota', null)),
      'openai',
    );
    expect(err.code).toBe('insufficient_quota');
  });

  it.each([401, 403])(
    'turns a %i (the gateway provider key) into a 502 naming the provider',
    async (status) => {
      const err = await upstreamHttpError(
        fakeResponse(
          status,
          openAiError('Incorrect API key provided: sk-...abc', 'invalid_api_key', null),
          {
            'retry-after': '1',
          },
        ),
        'openai-main',
      );
      expect(err).toMatchObject({ status: 502, kind: 'server', code: 'upstream_auth_failed' });
      expect(err.message).toContain("'openai-main'");
      expect(err.message).toContain(`HTTP ${status}`);
      expect(err.headers).toEqual({});
    },
  );

  it.each([500, 502, 503])('turns an upstream %i into a 502', async (status) => {
    const err = await upstreamHttpError(
      fakeResponse(status, JSON.stringify({ error: { message: 'Overloaded' } }), {
        'retry-after': '2',
      }),
      'anthropic',
    );
    expect(err).toMatchObject({ status: 502, kind: 'server', code: 'upstream_error' });
    expect(err.message).toContain(`HTTP ${status}`);
    expect(err.message).toContain('Overloaded');
    expect(err.headers).toEqual({ 'retry-after': '2' });
  });

  it('keeps a 529 as an overloaded 529 with its retry hints, whatever the provider', async () => {
    const err = await upstreamHttpError(
      fakeResponse(
        529,
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        { 'retry-after': '3' },
      ),
      'anthropic',
    );
    expect(err).toMatchObject({
      status: 529,
      kind: 'overloaded',
      code: 'upstream_overloaded',
      headers: { 'retry-after': '3' },
    });
    expect(err.message).toContain('Overloaded');
  });

  it('reads a bounded part of a huge error body and drops the rest', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024, 'a'));
      },
    });
    const res = { statusCode: 500, headers: {}, body: endless } as unknown as UpstreamResponse;
    const err = await upstreamHttpError(res, 'p');
    expect(err.status).toBe(502);
    expect(produced).toBeLessThan(1024 * 1024);
    expect(endless.destroyed).toBe(true);
  });

  it('reports the status alone when the body cannot be read', async () => {
    const err = await upstreamHttpError(fakeResponse(500, new Error('socket hang up')), 'p');
    expect(err.status).toBe(502);
    expect(err.message).toContain('HTTP 500');
    expect(err.message).not.toContain('socket hang up');
  });

  it('keeps a 404 as not found', async () => {
    const err = await upstreamHttpError(
      fakeResponse(404, openAiError('The model `x` does not exist', 'model_not_found', 'model')),
      'openai',
    );
    expect(err).toMatchObject({ status: 404, kind: 'not_found', code: 'model_not_found' });
  });

  it('bounds a long plain-text error body', async () => {
    const err = await upstreamHttpError(fakeResponse(400, 'x'.repeat(10_000)), 'p');
    expect(err.message.length).toBeLessThanOrEqual(500);
  });
});

describe('mapTransportError', () => {
  it.each([
    ['HeadersTimeoutError', new errors.HeadersTimeoutError()],
    ['BodyTimeoutError', new errors.BodyTimeoutError()],
    ['ConnectTimeoutError', new errors.ConnectTimeoutError()],
  ])('turns an undici %s into a 504', (_name, e) => {
    const err = mapTransportError(e);
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect(err).toMatchObject({ status: 504, kind: 'timeout', code: 'upstream_timeout' });
    expect(err.message).toContain(e.code);
    expect((err as GatewayError).cause).toBe(e);
  });

  it('turns a refused connection into a 502 naming the code', () => {
    const e = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
      code: 'ECONNREFUSED',
    });
    const err = mapTransportError(e);
    expect(err).toBeInstanceOf(UpstreamConnectionError);
    expect(err).toMatchObject({ status: 502, code: 'upstream_unavailable' });
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.message).not.toContain('127.0.0.1');
  });

  it('turns an undici socket error into a 502', () => {
    const err = mapTransportError(new errors.SocketError('other side closed'));
    expect(err).toMatchObject({ status: 502 });
    expect(err.message).toContain('UND_ERR_SOCKET');
  });

  it('names an error without a code by its name', () => {
    expect(mapTransportError(new TypeError('fetch failed')).message).toContain('TypeError');
  });

  it('turns any error into ClientClosedRequestError when our signal was aborted', () => {
    const controller = new AbortController();
    controller.abort();
    expect(mapTransportError(new errors.RequestAbortedError(), controller.signal)).toBeInstanceOf(
      ClientClosedRequestError,
    );
    expect(mapTransportError(new errors.HeadersTimeoutError(), controller.signal)).toBeInstanceOf(
      ClientClosedRequestError,
    );
  });

  it('does not treat a live signal as a client abort', () => {
    const controller = new AbortController();
    expect(mapTransportError(new errors.HeadersTimeoutError(), controller.signal)).toBeInstanceOf(
      UpstreamTimeoutError,
    );
  });

  it('passes a GatewayError through unchanged', () => {
    const e = new InvalidRequestError('x');
    expect(mapTransportError(e)).toBe(e);
  });
});

describe('UpstreamHttpClient', () => {
  const SECRET = 'sk-provider-secret-123';
  let server: import('node:http').Server;
  let origin: string;
  let reply: (res: import('node:http').ServerResponse) => void;
  let client: UpstreamHttpClient;

  beforeAll(async () => {
    const { createServer } = await import('node:http');
    server = createServer((_req, res) => reply(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    client = new UpstreamHttpClient(
      fakeUpstreamConfig({ maxAnswerBytes: 64 * 1024 }),
      new Redactor([SECRET]),
    );
  });
  afterAll(async () => {
    await client.onApplicationShutdown();
    server.close();
  });

  const post = (): Promise<UpstreamResponse> =>
    client.sendOk(
      {
        url: `${origin}/v1/x`,
        method: 'POST',
        headers: {},
        body: '{}',
        signal: new AbortController().signal,
      },
      'openai',
    );
  const rejection = (p: Promise<unknown>): Promise<Error> =>
    p.then(
      () => new Error('expected a rejection'),
      (e: unknown) => e as Error,
    );

  it('never relays a configured secret an upstream quotes back in its error', async () => {
    reply = (res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `bad key ${SECRET} used` } }));
    };
    const err = await rejection(post());
    expect(err.message).toContain('bad key [redacted] used');
    expect(err.message).not.toContain(SECRET);
  });

  it('redacts a 2xx error body and refuses a 2xx answer over the cap', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `quota of ${SECRET} exhausted` } }));
    };
    const signal = new AbortController().signal;
    const err = await rejection(
      post().then((res) => client.readAnswer(res, signal, 'openai', 'chat_completions')),
    );
    expect(err).toMatchObject({ status: 502 });
    expect(err.message).toContain('quota of [redacted] exhausted');

    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"pad":"${'x'.repeat(100 * 1024)}"}`);
    };
    const big = await rejection(
      post().then((res) => client.readAnswer(res, signal, 'openai', 'object')),
    );
    expect(big).toMatchObject({ status: 502, code: 'upstream_response_too_large' });
  });
});
