import OpenAI from 'openai';
import { chatCompletion, recordedLines, textStream, toolCallStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';
import { rejection as rejectionOf } from './support/rejection';
import { post as httpPost } from './support/http';

const SYSTEM = { role: 'system' as const, content: 'You are a terse assistant.' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('POST /v1/chat/completions against an OpenAI upstream', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({ CATALOG_PATH: testCatalog(upstream.url), SSE_KEEPALIVE_MS: '100' });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => upstream.reset());

  it('forwards a non-streaming request with the upstream model id and returns the catalog id', async () => {
    upstream.on('/v1/chat/completions', () => ({
      json: chatCompletion('upstream-gpt-1-2025', 'Bonjour'),
    }));
    const completion = await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Say hello in French' }],
    });
    expect(completion.choices[0].message.content).toBe('Bonjour');
    expect(completion.model).toBe('test-gpt');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    const sent = upstream.last();
    expect(sent.body.model).toBe('upstream-gpt-1');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(sent.body.messages[1].content).toBe('Say hello in French');
  });

  it('keeps every field it does not handle when forwarding (rule S2)', async () => {
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'ok') }));
    await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'hi' }],
      prompt_cache_key: 'team-a',
      seed: 7,
      logit_bias: { '50256': -100 },
      // A field no SDK types know about must still reach the upstream.
      ...({ vendor_extension: { nested: [1, 2, 3] } } as object),
    });
    const body = upstream.last().body;
    expect(body.prompt_cache_key).toBe('team-a');
    expect(body.seed).toBe(7);
    expect(body.logit_bias).toEqual({ '50256': -100 });
    expect(body.vendor_extension).toEqual({ nested: [1, 2, 3] });
  });

  it('sends the raw body untouched when the upstream id equals the catalog id', async () => {
    upstream.on('/vllm/v1/chat/completions', () => ({ json: chatCompletion('test-vllm', 'ok') }));
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: '{"model":"test-vllm",  "messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]}',
    });
    expect(res.status).toBe(200);
    expect(upstream.last().raw).toBe(
      '{"model":"test-vllm",  "messages":[{"role":"system","content":"s"},{"role":"user","content":"x"}]}',
    );
    expect(upstream.last().headers.authorization).toBeUndefined();
  });

  it('streams chunks in order with for-await and ends at [DONE]', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: [...textStream('upstream-gpt-1', ['Hel', 'lo', '!'], true), '[DONE]'],
    }));
    const stream = await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'hi' }],
      stream: true,
    });
    const pieces: string[] = [];
    const models = new Set<string>();
    let usageChunks = 0;
    for await (const chunk of stream) {
      models.add(chunk.model);
      if (chunk.usage) {
        usageChunks++;
      }
      pieces.push(chunk.choices[0]?.delta?.content ?? '');
    }
    expect(pieces.join('')).toBe('Hello!');
    expect([...models]).toEqual(['test-gpt']);
    // The gateway asked the upstream for usage (for accounting) but the client did not.
    expect(upstream.last().body.stream_options).toEqual({ include_usage: true });
    expect(usageChunks).toBe(0);
    const log = gw.logs.find(
      (l) => l.msg === 'request' && l.model === 'test-gpt' && l.stream === true,
    );
    expect(log?.usage).toMatchObject({ inputTokens: 9, outputTokens: 2 });
  });

  it('relays the usage chunk when the client asked for it', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: [...textStream('upstream-gpt-1', ['a'], true), '[DONE]'],
    }));
    const stream = client.chat.completions.stream({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(final.usage?.total_tokens).toBe(11);
    expect(final.choices[0].message.content).toBe('a');
  });

  it('assembles streamed tool-call deltas with chat.completions.stream()', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: [...toolCallStream('upstream-gpt-1'), '[DONE]'],
    }));
    const stream = client.chat.completions.stream({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'weather and time in Paris?' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
        },
        {
          type: 'function',
          function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
        },
      ],
    });
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0].message.tool_calls ?? [];
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(
      calls.map((c) =>
        c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : [],
      ),
    ).toEqual([
      ['call_1', 'get_weather', '{"city":"Paris"}'],
      ['call_2', 'get_time', '{"tz":"CET"}'],
    ]);
    expect(upstream.last().body.tools).toHaveLength(2);
  });

  const recorded = recordedLines('openai-chat/text.stream.jsonl');
  (recorded ? it : it.skip)(
    'relays the recorded OpenAI stream byte-for-byte in content',
    async () => {
      const events = recorded!;
      upstream.on('/v1/chat/completions', () => ({ sse: [...events, '[DONE]'] }));
      const stream = client.chat.completions.stream({
        model: 'test-gpt',
        messages: [SYSTEM, { role: 'user', content: 'invent a holiday' }],
      });
      const final = await stream.finalChatCompletion();
      const expected = events
        .map((e: any) => (e.choices?.[0]?.delta?.content as string | undefined) ?? '')
        .join('');
      expect(final.choices[0].message.content).toBe(expected);
      expect(final.model).toBe('test-gpt');
    },
  );

  it('sends SSE keep-alive comments while the upstream is silent', async () => {
    const events = textStream('upstream-gpt-1', ['slow'], false);
    upstream.on('/v1/chat/completions', () => ({
      sse: [events[0], events[1], events[2], '[DONE]'],
      intervalMs: 250,
    }));
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'test-gpt',
        stream: true,
        messages: [SYSTEM, { role: 'user', content: 'x' }],
      }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text).toContain(': keepalive\n\n');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('aborts the upstream request as soon as the client aborts the stream', async () => {
    const events = textStream('upstream-gpt-1', ['one', 'two', 'three'], false);
    upstream.on('/v1/chat/completions', () => ({ sse: events.slice(0, 2), after: 'hold' }));
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'test-gpt', stream: true, messages: [SYSTEM, { role: 'user', content: 'x' }] },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content === 'one') {
        controller.abort();
      }
    }
    await expect(
      Promise.race([upstream.last().ended, sleep(2000).then(() => 'still open')]),
    ).resolves.toBe('aborted');
  });

  it('turns an upstream failure after the first byte into an in-stream error', async () => {
    const events = textStream('upstream-gpt-1', ['partial'], false);
    upstream.on('/v1/chat/completions', () => ({ sse: events.slice(0, 2), after: 'destroy' }));
    const stream = await client.chat.completions.create({
      model: 'test-gpt',
      stream: true,
      messages: [SYSTEM, { role: 'user', content: 'x' }],
    });
    const seen: string[] = [];
    const consume = async (): Promise<void> => {
      for await (const chunk of stream) {
        seen.push(chunk.choices[0]?.delta?.content ?? '');
      }
    };
    await expect(consume()).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(seen.join('')).toBe('partial');
  });

  it('gives every response an x-request-id', async () => {
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'ok') }));
    const { response } = await client.chat.completions
      .create({ model: 'test-gpt', messages: [SYSTEM, { role: 'user', content: 'x' }] })
      .withResponse();
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    const bad = await fetch(`${gw.baseURL}/nope`);
    expect(bad.headers.get('x-request-id')).toBeTruthy();
  });

  it('never writes message content or keys to the logs', async () => {
    upstream.on('/v1/chat/completions', () => ({
      json: chatCompletion('upstream-gpt-1', 'reply-canary-77'),
    }));
    await client.chat.completions.create({
      model: 'test-gpt',
      messages: [SYSTEM, { role: 'user', content: 'prompt-canary-42' }],
    });
    const all = gw.rawLogs.join('');
    expect(all).toContain('"model":"test-gpt"');
    expect(all).not.toContain('prompt-canary-42');
    expect(all).not.toContain('reply-canary-77');
    expect(all).not.toContain(TEST_KEY);
    expect(all).not.toContain('sk-upstream-secret');
  });
});

describe('chat completions errors surface as the SDK error classes', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({
      CATALOG_PATH: testCatalog(upstream.url),
      MAX_BODY_SIZE: '4kb',
      UPSTREAM_HEADERS_TIMEOUT_MS: '300',
    });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => upstream.reset());

  const create = (body: Record<string, unknown>, c: OpenAI = client): Promise<unknown> =>
    c.chat.completions.create(body as never);
  const ok = { model: 'test-gpt', messages: [SYSTEM, { role: 'user', content: 'hi' }] };

  const rejection = (p: Promise<unknown>) => rejectionOf<InstanceType<typeof OpenAI.APIError>>(p);

  it('answers 401 without a key and with a wrong key', async () => {
    const wrong = new OpenAI({ baseURL: gw.baseURL, apiKey: 'nope', maxRetries: 0 });
    const e = await rejection(create(ok, wrong));
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e.code).toBe('invalid_api_key');
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(ok),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: expect.objectContaining({ type: 'invalid_request_error', code: null, param: null }),
    });
    expect(upstream.requests).toHaveLength(0);
  });

  it('rejects a request without a system prompt before any upstream call (S1)', async () => {
    const e = await rejection(
      create({ model: 'test-gpt', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe('messages');
    expect(e.message).toMatch(/system prompt is required/);
    const dev = await rejection(
      create({
        model: 'test-gpt',
        messages: [
          { role: 'developer', content: '  ' },
          { role: 'user', content: 'x' },
        ],
      }),
    );
    expect(dev.status).toBe(400);
    expect(upstream.requests).toHaveLength(0);
  });

  it('accepts a developer message as the system prompt', async () => {
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'ok') }));
    await create({
      model: 'test-gpt',
      messages: [
        { role: 'developer', content: 'rules' },
        { role: 'user', content: 'x' },
      ],
    });
    expect(upstream.requests).toHaveLength(1);
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    const e = await rejection(create({ ...ok, model: 'gpt-does-not-exist' }));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e.code).toBe('model_not_found');
  });

  it('answers 400 for a model the endpoint does not accept', async () => {
    const e = await rejection(create({ ...ok, model: 'messages-only' }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.message).toContain('/v1/messages');
  });

  it('answers 503 without retry for a model whose provider has no key', async () => {
    const e = await rejection(create({ ...ok, model: 'no-key-model' }));
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(503);
    expect(e.headers?.get('x-should-retry')).toBe('false');
    expect(e.message).toContain('TEST_UNSET_KEY_VARIABLE');
  });

  it.each([
    ['model', { messages: ok.messages }],
    ['messages', { model: 'test-gpt' }],
    ['temperature', { ...ok, temperature: 'hot' }],
    ['max_tokens', { ...ok, max_tokens: 0 }],
    ['stream', { ...ok, stream: 'yes' }],
    ['messages[1].role', { ...ok, messages: [SYSTEM, { role: 'wizard', content: 'x' }] }],
  ])('answers 400 naming %s when it is missing or of the wrong type', async (param, body) => {
    const e = await rejection(create(body));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe(param);
    expect(upstream.requests).toHaveLength(0);
  });

  it('answers 400 in the OpenAI envelope for malformed JSON and for a body that is not an object', async () => {
    for (const body of ['{"model":', '[1,2]', '"text"']) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { type: string; message: string } };
      expect(json.error.type).toBe('invalid_request_error');
      expect(json.error.message).not.toMatch(/at .*\.js/);
    }
  });

  it('answers 413 for a body over the size limit', async () => {
    const e = await rejection(
      create({ ...ok, messages: [SYSTEM, { role: 'user', content: 'x'.repeat(10_000) }] }),
    );
    expect(e.status).toBe(413);
    expect(e.message).toMatch(/larger than the limit/);
  });

  it('answers 404 in the OpenAI shape for an unknown path, never HTML', async () => {
    const res = await fetch(`${gw.baseURL}/does/not/exist`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({
      error: {
        message: 'Invalid URL (GET /v1/does/not/exist)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });

  it('keeps an upstream 400 as a 400 with the upstream message, code and param', async () => {
    upstream.on('/v1/chat/completions', () => ({
      status: 400,
      json: {
        error: {
          message: "Unsupported value: 'temperature'",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'unsupported_value',
        },
      },
    }));
    const e = await rejection(create(ok));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.message).toContain("Unsupported value: 'temperature'");
    expect(e.code).toBe('unsupported_value');
    expect(e.param).toBe('temperature');
  });

  it('keeps an upstream 429 as a 429 with its retry-after', async () => {
    upstream.on('/v1/chat/completions', () => ({
      status: 429,
      headers: { 'retry-after': '7' },
      json: {
        error: {
          message: 'Rate limit reached',
          type: 'requests',
          code: 'rate_limit_exceeded',
          param: null,
        },
      },
    }));
    const e = await rejection(create(ok));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.headers?.get('retry-after')).toBe('7');
  });

  it('turns an upstream 500 into a 502', async () => {
    upstream.on('/v1/chat/completions', () => ({
      status: 500,
      json: { error: { message: 'boom' } },
    }));
    const e = await rejection(create(ok));
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(502);
  });

  it('turns a dropped upstream connection into a 502 and a silent upstream into a 504', async () => {
    upstream.on('/v1/chat/completions', () => ({ destroy: true }));
    expect((await rejection(create(ok))).status).toBe(502);
    upstream.on('/v1/chat/completions', () => ({ hang: true }));
    const timedOut = await rejection(create(ok));
    expect(timedOut.status).toBe(504);
    expect(timedOut.code).toBe('upstream_timeout');
  });
});

describe('chat completions fast path against an upstream that answers wrongly', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({ CATALOG_PATH: testCatalog(upstream.url) });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => upstream.reset());

  const post = (body: Record<string, unknown> | string): Promise<Response> =>
    httpPost(gw.origin, '/v1/chat/completions', body);
  const ok = { model: 'test-gpt', messages: [SYSTEM, { role: 'user' as const, content: 'hi' }] };

  it.each([
    ['not JSON', { text: '<html>Bad Gateway</html>', status: 200 }],
    ['null', { json: null }],
    ['a JSON string', { json: 'fine' }],
  ])(
    'answers 502 upstream_error naming the provider for a 2xx body that is %s',
    async (_, reply) => {
      upstream.on('/v1/chat/completions', () => reply);
      const res = await post(ok);
      expect(res.status).toBe(502);
      const { error } = (await res.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
      expect(error.message).toContain("'fake-openai'");
    },
  );

  it.each([
    [
      'an HTML page',
      { text: '<html>nginx</html>', status: 200, headers: { 'content-type': 'text/html' } },
      'text/html',
    ],
    [
      'a whole JSON completion',
      { json: chatCompletion('upstream-gpt-1', 'all at once') },
      'application/json',
    ],
  ])(
    'answers a streamed request that got %s with a 502 before any header',
    async (_, reply, type) => {
      upstream.on('/v1/chat/completions', () => reply);
      const res = await post({ ...ok, stream: true });
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toContain('application/json');
      const { error } = (await res.json()) as { error: Record<string, string> };
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain("'fake-openai'");
      expect(error.message).toContain(type);
    },
  );

  it('keeps the message and status class of a JSON error body sent instead of a stream', async () => {
    upstream.on('/v1/chat/completions', () => ({
      json: {
        error: {
          message: 'This model does not support streaming.',
          type: 'invalid_request_error',
          param: 'stream',
          code: 'unsupported_value',
        },
      },
    }));
    const e = (await client.chat.completions.create({ ...ok, stream: true }).then(
      () => undefined,
      (err: unknown) => err,
    )) as InstanceType<typeof OpenAI.APIError>;
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.message).toContain('does not support streaming');
    expect(e.param).toBe('stream');
  });

  it('makes the SDK throw for a stream that ends without [DONE] and without a finish_reason', async () => {
    const events = textStream('upstream-gpt-1', ['partial'], false);
    upstream.on('/v1/chat/completions', () => ({ sse: events.slice(0, 2) }));
    const stream = await client.chat.completions.create({ ...ok, stream: true });
    const seen: string[] = [];
    const consume = async (): Promise<void> => {
      for await (const chunk of stream) {
        seen.push(chunk.choices[0]?.delta?.content ?? '');
      }
    };
    const e = await consume().then(
      () => undefined,
      (err: unknown) => err as InstanceType<typeof OpenAI.APIError>,
    );
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect(e?.code).toBe('upstream_stream_incomplete');
    expect(seen.join('')).toBe('partial');
  });

  it('ends a finished stream whose [DONE] is missing with [DONE]', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: textStream('upstream-gpt-1', ['whole'], false),
    }));
    const text = await (await post({ ...ok, stream: true })).text();
    expect(text).not.toContain('"error"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('splices include_usage into the raw bytes of a streamed request without stream_options', async () => {
    upstream.on('/vllm/v1/chat/completions', () => ({
      sse: [...textStream('test-vllm', ['a'], true), '[DONE]'],
    }));
    const raw =
      '{"model":"test-vllm",  "stream":true,"messages":[{"role":"system","content":"s"},{"role":"user","content":"\\u00e9"}]}';
    const res = await post(raw);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(upstream.last().raw).toBe(`{"stream_options":{"include_usage":true},${raw.slice(1)}`);
    // Asked for by the gateway, not by the client: the usage chunk is not relayed.
    expect(text).not.toContain('"usage":{');
    expect(text).toContain('"model":"test-vllm"');
  });

  it('re-serializes a body whose stream_options lacks include_usage, keeping its fields', async () => {
    upstream.on('/vllm/v1/chat/completions', () => ({
      sse: [...textStream('test-vllm', ['a'], true), '[DONE]'],
    }));
    const res = await post({
      model: 'test-vllm',
      stream: true,
      stream_options: { include_obfuscation: false },
      messages: [SYSTEM, { role: 'user', content: 'x' }],
    });
    await res.text();
    expect(upstream.last().body.stream_options).toEqual({
      include_obfuscation: false,
      include_usage: true,
    });
  });

  it('returns the upstream bytes as they are when they already carry the catalog id', async () => {
    const answer = JSON.stringify(chatCompletion('test-vllm', 'ok'), null, 2);
    upstream.on('/vllm/v1/chat/completions', () => ({
      text: answer,
      status: 200,
      headers: { 'content-type': 'application/json' },
    }));
    const res = await post({ ...ok, model: 'test-vllm' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.text()).toBe(answer);
  });
});
