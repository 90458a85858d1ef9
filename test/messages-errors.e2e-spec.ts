import Anthropic from '@anthropic-ai/sdk';
import {
  ANTHROPIC_SDKS,
  UPSTREAM_MODEL,
  messagesCatalog,
  named,
  textEvents,
} from './support/anthropic-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { rejection as rejectionOf } from './support/rejection';

type ApiError = InstanceType<typeof Anthropic.APIError>;
type ErrorClass = abstract new (...args: never[]) => ApiError;

const SYSTEM = 'You are a terse assistant.';
const OK = {
  model: 'test-claude',
  max_tokens: 1024,
  system: SYSTEM,
  messages: [{ role: 'user' as const, content: 'hi' }],
};

let upstream: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  gw = await startGateway({
    CATALOG_PATH: messagesCatalog(upstream.url),
    MAX_BODY_SIZE: '16kb',
  });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => upstream.reset());

const rejection = (p: Promise<unknown>) => rejectionOf<ApiError>(p);

/** The SDK's own class, the status, and the Anthropic error type on the error and its body. */
function expectApiError(e: ApiError, cls: ErrorClass, status: number, type: string): void {
  expect(e).toBeInstanceOf(cls);
  expect(e.status).toBe(status);
  expect(e.type).toBe(type);
  expect(e.error).toMatchObject({ type: 'error', error: { type } });
  expect(e.requestID).toMatch(/^req_[0-9a-f]{24}$/);
}

describe.each(ANTHROPIC_SDKS)(
  'POST /v1/messages errors surface as the Anthropic SDK $line error classes',
  ({ Sdk }) => {
    let client: Anthropic;
    const create = (body: Record<string, unknown>, c: Anthropic = client): Promise<unknown> =>
      c.messages.create(body as never);

    beforeAll(() => {
      client = new Sdk({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
    });

    it('answers 401 authentication_error for a wrong key, in the header style of this SDK', async () => {
      const wrong = new Sdk({ baseURL: gw.origin, apiKey: 'wrong-key', maxRetries: 0 });
      const e = await rejection(create(OK, wrong));
      expectApiError(e, Sdk.AuthenticationError, 401, 'authentication_error');
      expect(e.message).toContain('Incorrect API key');
      expect(upstream.requests).toHaveLength(0);
    });

    it('answers 401 authentication_error when no key is sent', async () => {
      const keyless = new Sdk({
        baseURL: gw.origin,
        apiKey: null,
        authToken: null,
        // Tells the SDK that sending no credentials is deliberate.
        defaultHeaders: { 'X-Api-Key': null, Authorization: null },
        maxRetries: 0,
      });
      const e = await rejection(create(OK, keyless));
      expectApiError(e, Sdk.AuthenticationError, 401, 'authentication_error');
      const counted = await rejection(
        keyless.messages.countTokens({ model: 'test-claude', messages: OK.messages }),
      );
      expectApiError(counted, Sdk.AuthenticationError, 401, 'authentication_error');
    });

    it.each([
      ['missing', {}],
      ['empty', { system: '' }],
      ['blank blocks', { system: [{ type: 'text', text: '  ' }] }],
      ['no blocks', { system: [] }],
    ])(
      'rejects a request whose system prompt is %s before any upstream call (S1)',
      async (_case, system) => {
        const { system: _drop, ...rest } = OK;
        const e = await rejection(create({ ...rest, ...system }));
        expectApiError(e, Sdk.BadRequestError, 400, 'invalid_request_error');
        expect(e.message).toMatch(/system prompt is required/);
        expect(upstream.requests).toHaveLength(0);
      },
    );

    it('answers 404 not_found_error for an unknown model', async () => {
      const e = await rejection(create({ ...OK, model: 'claude-does-not-exist' }));
      expectApiError(e, Sdk.NotFoundError, 404, 'not_found_error');
      expect(e.message).toContain('claude-does-not-exist');
      const counted = await rejection(
        client.messages.countTokens({ model: 'nope', messages: OK.messages }),
      );
      expectApiError(counted, Sdk.NotFoundError, 404, 'not_found_error');
    });

    it('answers 400 for a model the catalog excludes from /v1/messages', async () => {
      const e = await rejection(create({ ...OK, model: 'chat-only' }));
      expectApiError(e, Sdk.BadRequestError, 400, 'invalid_request_error');
      expect(e.message).toContain('not supported on /v1/messages');
      expect(e.message).toContain('/v1/chat/completions');
    });

    it('answers an OpenAI 429 from a translated model as a rate_limit_error, keeping retry-after', async () => {
      upstream.on('/v1/chat/completions', () => ({
        status: 429,
        headers: { 'retry-after': '7' },
        json: {
          error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' },
        },
      }));
      const e = await rejection(create({ ...OK, model: 'test-gpt' }));
      expectApiError(e, Sdk.RateLimitError, 429, 'rate_limit_error');
      expect(e.headers?.get('retry-after')).toBe('7');
      expect(upstream.last().path).toBe('/v1/chat/completions');
    });

    it.each([
      ["Missing required parameter: 'max_tokens'.", { ...OK, max_tokens: undefined }],
      ["Missing required parameter: 'model'.", { ...OK, model: undefined }],
      ["Missing required parameter: 'messages'.", { ...OK, messages: undefined }],
      ["Invalid type for 'max_tokens'", { ...OK, max_tokens: 'many' }],
      ["Invalid value for 'temperature'", { ...OK, temperature: 1.5 }],
      ["'messages.0.role'", { ...OK, messages: [{ role: 'wizard', content: 'x' }] }],
      [
        "Missing required parameter: 'messages.0.content.0.text'.",
        { ...OK, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      ],
      ["'tool_choice.type'", { ...OK, tool_choice: { type: 'sometimes' } }],
      ["'thinking.budget_tokens'", { ...OK, thinking: { type: 'enabled' } }],
    ])('answers 400 naming %s', async (expected, body) => {
      const e = await rejection(create(body));
      expectApiError(e, Sdk.BadRequestError, 400, 'invalid_request_error');
      expect(e.message).toContain(expected);
      expect(upstream.requests).toHaveLength(0);
    });

    it('answers 413 request_too_large for a body over the size limit', async () => {
      const e = await rejection(
        create({ ...OK, messages: [{ role: 'user', content: 'x'.repeat(20_000) }] }),
      );
      expectApiError(e, Sdk.APIError, 413, 'request_too_large');
    });

    it('keeps an upstream 400 with the upstream message', async () => {
      upstream.on('/v1/messages', () => ({
        status: 400,
        json: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'messages.1: thinking blocks were modified',
          },
        },
      }));
      const e = await rejection(create(OK));
      expectApiError(e, Sdk.BadRequestError, 400, 'invalid_request_error');
      expect(e.message).toContain('thinking blocks were modified');
    });

    it('keeps an upstream 429 as rate_limit_error with its retry-after', async () => {
      upstream.on('/v1/messages', () => ({
        status: 429,
        headers: { 'retry-after': '7' },
        json: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
      }));
      const e = await rejection(create(OK));
      expectApiError(e, Sdk.RateLimitError, 429, 'rate_limit_error');
      expect(e.headers?.get('retry-after')).toBe('7');
    });

    it('keeps an upstream 529 as overloaded_error', async () => {
      upstream.on('/v1/messages', () => ({
        status: 529,
        json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      }));
      const e = await rejection(create(OK));
      expectApiError(e, Sdk.InternalServerError, 529, 'overloaded_error');
      expect(e.message).toContain('Overloaded');
    });

    it('turns an upstream 500 into a 502 api_error', async () => {
      upstream.on('/v1/messages', () => ({
        status: 500,
        json: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
      }));
      const e = await rejection(create(OK));
      expectApiError(e, Sdk.InternalServerError, 502, 'api_error');
    });

    it("reports an upstream rejection of the gateway's own key as a 502, not as the client's 401", async () => {
      upstream.on('/v1/messages/count_tokens', () => ({
        status: 401,
        json: {
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        },
      }));
      const e = await rejection(
        client.messages.countTokens({ model: 'test-claude', messages: OK.messages }),
      );
      expectApiError(e, Sdk.InternalServerError, 502, 'api_error');
      expect(e.message).toContain("rejected the gateway's credentials");
    });

    it('relays an upstream error event after the stream started', async () => {
      upstream.on('/v1/messages', () => ({
        sse: [
          ...named(textEvents(UPSTREAM_MODEL, ['partial']).slice(0, 4)),
          {
            event: 'error',
            data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
          },
        ],
      }));
      const stream = client.messages.stream(OK);
      const texts: string[] = [];
      stream.on('text', (t) => texts.push(t));
      const e = await rejection(stream.finalMessage());
      expect(e).toBeInstanceOf(Sdk.APIError);
      expect(e.type).toBe('overloaded_error');
      expect(texts).toEqual(['partial']);
    });

    it('sends an api_error event when the upstream stream ends without message_stop', async () => {
      upstream.on('/v1/messages', () => ({
        sse: named(textEvents(UPSTREAM_MODEL, ['partial']).slice(0, 4)),
      }));
      const stream = await client.messages.create({ ...OK, stream: true });
      const texts: string[] = [];
      const consume = async (): Promise<void> => {
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            texts.push(event.delta.text);
          }
        }
      };
      const e = await rejection(consume());
      expect(e).toBeInstanceOf(Sdk.APIError);
      expect(e.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(e.message).toContain('ended before the message completed');
      expect(texts).toEqual(['partial']);
    });

    it('turns an upstream connection lost mid-stream into an error event', async () => {
      upstream.on('/v1/messages', () => ({
        sse: named(textEvents(UPSTREAM_MODEL, ['partial']).slice(0, 4)),
        after: 'destroy',
      }));
      const stream = await client.messages.create({ ...OK, stream: true });
      const texts: string[] = [];
      const consume = async (): Promise<void> => {
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            texts.push(event.delta.text);
          }
        }
      };
      const e = await rejection(consume());
      expect(e).toBeInstanceOf(Sdk.APIError);
      expect(e.type).toBe('api_error');
      expect(e.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(texts).toEqual(['partial']);
    });
  },
);

describe('Anthropic error envelope outside the SDKs', () => {
  const post = (path: string, body: string): Promise<Response> =>
    fetch(`${gw.origin}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
      body,
    });

  it.each(['/v1/messages', '/v1/messages/count_tokens'])(
    'answers 400 invalid_request_error for malformed JSON and non-object bodies on %s',
    async (path) => {
      for (const body of ['{"model":', '[1,2]', '"text"']) {
        const res = await post(path, body);
        expect(res.status).toBe(400);
        const json = (await res.json()) as Record<string, unknown>;
        expect(json).toEqual({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.any(String) },
          request_id: res.headers.get('request-id'),
        });
      }
      expect(upstream.requests).toHaveLength(0);
    },
  );

  it('answers 404 not_found_error for an unknown path under /v1/messages', async () => {
    const res = await post('/v1/messages/batches', '{}');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', message: 'Invalid URL (POST /v1/messages/batches)' },
    });
  });

  it('answers 401 authentication_error with a bad Bearer token and with a bad x-api-key', async () => {
    const styles: Record<string, string>[] = [
      { authorization: 'Bearer nope' },
      { 'x-api-key': 'nope' },
    ];
    for (const headers of styles) {
      const res = await fetch(`${gw.origin}/v1/messages`, {
        method: 'POST',
        headers,
        body: JSON.stringify(OK),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error' },
      });
    }
  });
});

describe('POST /v1/messages fast path against an upstream that answers wrongly', () => {
  const post = (path: string, body: Record<string, unknown>): Promise<Response> =>
    fetch(`${gw.origin}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function expectUpstreamError(res: Response, ...parts: string[]): Promise<void> {
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    for (const part of ["'fake-anthropic'", ...parts]) {
      expect(body.error.message).toContain(part);
    }
  }

  it.each([
    ['not JSON', { text: '<html>Bad Gateway</html>', status: 200 }],
    ['null', { json: null }],
    ['a JSON string', { json: 'fine' }],
  ])('answers 502 api_error for a 2xx message body that is %s', async (_, reply) => {
    upstream.on('/v1/messages', () => reply);
    await expectUpstreamError(await post('/v1/messages', OK));
  });

  it.each([
    ['not JSON', { text: 'oops', status: 200 }],
    ['null', { json: null }],
  ])('answers 502 api_error for a 2xx count_tokens body that is %s', async (_, reply) => {
    upstream.on('/v1/messages/count_tokens', () => reply);
    await expectUpstreamError(
      await post('/v1/messages/count_tokens', { model: 'test-claude', messages: OK.messages }),
    );
  });

  it('answers a streamed request that got an HTML page with a 502 before any header', async () => {
    upstream.on('/v1/messages', () => ({
      text: '<html>maintenance</html>',
      status: 200,
      headers: { 'content-type': 'text/html' },
    }));
    await expectUpstreamError(await post('/v1/messages', { ...OK, stream: true }), 'text/html');
  });

  it('keeps the message and status class of a JSON error body sent instead of a stream', async () => {
    upstream.on('/v1/messages', () => ({
      json: { type: 'error', error: { type: 'invalid_request_error', message: 'bad thinking' } },
    }));
    const res = await post('/v1/messages', { ...OK, stream: true });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'bad thinking' },
    });
  });
});
