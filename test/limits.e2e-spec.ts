import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { sha256Hex } from '../src/keys/key-secret';
import { MessagesController } from '../src/formats/messages/messages.controller';
import { ResponsesController } from '../src/formats/responses/responses.controller';
import { requestLimitsOf } from '../src/limits/request-limits.guard';
import { startGateway, TEST_KEY, writeCatalog, type TestGateway } from './support/gateway';

/** Local models (no network) with small windows, so request limits are easy to reach. */
const CATALOG = writeCatalog(`
providers:
  - name: local
    kind: local
models:
  - { id: small-gpt, provider: local, family: openai, context_window: 2000, max_output_tokens: 500, pricing: { input: 0, output: 0 } }
  - { id: small-claude, provider: local, family: anthropic, context_window: 2000, max_output_tokens: 500, pricing: { input: 0, output: 0 } }
`);
const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };
const user = (content: string) => ({ role: 'user' as const, content });

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('request limits, before any upstream call', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startGateway({
      CATALOG_PATH: CATALOG,
      REDIS_URL: '', // in memory, even when the environment points at a Redis
      REQUEST_MAX_MESSAGES: '4',
      REQUEST_MAX_TOOLS: '1',
      REQUEST_MAX_CONTENT_PARTS: '3',
      MAX_BODY_SIZE: '20kb',
    });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(() => gw.close());

  it('rejects max_tokens above the model maximum with a 400 naming the parameter', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        max_tokens: 501,
        messages: [SYSTEM, user('hi')],
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'max_tokens', code: 'invalid_value' });
    expect(err.error).toMatchObject({
      message:
        "'max_tokens' is too large: 501. The model 'small-gpt' supports at most 500 output tokens.",
    });
  });

  it('rejects a max_completion_tokens that is not a positive integer', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        max_completion_tokens: 0,
        messages: [SYSTEM, user('hi')],
      }),
    );
    expect(err).toMatchObject({ status: 400, param: 'max_completion_tokens' });
  });

  it('accepts exactly the model maximum', async () => {
    const completion = await client.chat.completions.create({
      model: 'small-gpt',
      max_tokens: 500,
      messages: [SYSTEM, user('hi')],
    });
    expect(completion.choices[0].message.content).toBe('Echo: hi');
  });

  it('rejects a prompt plus output above the context window with context_length_exceeded and the numbers', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        max_tokens: 100,
        messages: [SYSTEM, user('word '.repeat(2500))],
      }),
    );
    expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
    expect(err.message).toMatch(
      /maximum context length is 2000 tokens\. However, you requested about (\d+) tokens \(about (\d+) in the prompt, 100 in the output \(max_tokens\)\)/,
    );
    const [, total, prompt] = /about (\d+) tokens \(about (\d+)/.exec(err.message)!;
    expect(Number(prompt)).toBeGreaterThan(2500);
    expect(Number(total)).toBe(Number(prompt) + 100);
  });

  it('lets a prompt near the window through when the estimate is only approximate (anthropic family)', async () => {
    // ~1900 cl100k tokens x 1.1 = ~2100 estimated: over 2000, but within the 15% tolerance.
    const completion = await client.chat.completions.create({
      model: 'small-claude',
      messages: [SYSTEM, user('word '.repeat(1880))],
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it('rejects too many messages', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        messages: [SYSTEM, user('1'), user('2'), user('3'), user('4')],
      }),
    );
    expect(err).toMatchObject({ status: 400, param: 'messages', code: 'array_above_max_length' });
    expect(err.error).toMatchObject({
      message:
        "Invalid 'messages': array too long. Expected an array with maximum length 4, but got an array with length 5 instead.",
    });
  });

  it('rejects too many tools', async () => {
    const tool = (name: string) => ({
      type: 'function' as const,
      function: { name, parameters: { type: 'object' } },
    });
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        messages: [SYSTEM, user('hi')],
        tools: [tool('a'), tool('b')],
      }),
    );
    expect(err).toMatchObject({ status: 400, param: 'tools', code: 'array_above_max_length' });
  });

  it('rejects too many content parts', async () => {
    const part = { type: 'text' as const, text: 'x' };
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        messages: [SYSTEM, { role: 'user', content: [part, part, part, part] }],
      }),
    );
    expect(err).toMatchObject({ status: 400, code: 'too_many_content_parts' });
  });

  it('answers a body over MAX_BODY_SIZE with 413 on chat completions (OpenAI SDK)', async () => {
    const err = await failure(
      client.chat.completions.create({
        model: 'small-gpt',
        messages: [SYSTEM, user('x'.repeat(30_000))],
      }),
    );
    expect(err).toMatchObject({ status: 413, code: 'request_too_large' });
  });

  it('answers a body over MAX_BODY_SIZE with 413 in the OpenAI envelope on /v1/responses', async () => {
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'small-gpt', instructions: 'x', input: 'x'.repeat(30_000) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      error: { code: 'request_too_large', type: 'invalid_request_error' },
    });
  });

  it('answers a body over MAX_BODY_SIZE with 413 in the Anthropic envelope on /v1/messages (Anthropic SDK)', async () => {
    const anthropic = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
    const err = await anthropic.messages
      .create({
        model: 'small-claude',
        max_tokens: 10,
        system: 'x',
        messages: [user('x'.repeat(30_000))],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err).toMatchObject({
      status: 413,
      error: { type: 'error', error: { type: 'request_too_large' } },
    });
  });

  it('sends no rate-limit headers when no rate limit is configured', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'small-gpt', messages: [SYSTEM, user('hi')] })
      .withResponse();
    expect([...response.headers.keys()].filter((h) => h.includes('ratelimit'))).toEqual([]);
  });

  const messagesWired = requestLimitsOf(MessagesController.prototype.create) !== undefined;
  (messagesWired ? it : it.skip)(
    'rejects max_tokens above the model maximum on /v1/messages (Anthropic SDK)',
    async () => {
      const anthropic = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
      const err = await anthropic.messages
        .create({ model: 'small-claude', max_tokens: 501, system: 'x', messages: [user('hi')] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as Error).message).toContain("'max_tokens' is too large: 501");
    },
  );

  const responsesWired = requestLimitsOf(ResponsesController.prototype.create) !== undefined;
  (responsesWired ? it : it.skip)(
    'rejects max_output_tokens above the model maximum on /v1/responses (OpenAI SDK)',
    async () => {
      const err = await failure(
        client.responses.create({
          model: 'small-gpt',
          instructions: 'x',
          input: 'hi',
          max_output_tokens: 501,
        }),
      );
      expect(err).toMatchObject({ status: 400, param: 'max_output_tokens' });
    },
  );
});

describe('rate limits in memory (one replica)', () => {
  let gw: TestGateway;

  afterEach(() => gw.close());

  it('puts the OpenAI rate-limit headers on streamed responses too', async () => {
    gw = await startGateway({
      CATALOG_PATH: CATALOG,
      REDIS_URL: '', // in memory, even when the environment points at a Redis
      RATE_LIMIT_REQUESTS_PER_MINUTE: '100',
      RATE_LIMIT_TOKENS_PER_MINUTE: '100000',
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'small-gpt', stream: true, max_tokens: 50, messages: [SYSTEM, user('hi')] })
      .withResponse();
    for await (const chunk of stream) {
      void chunk;
    }
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('99');
    expect(response.headers.get('x-ratelimit-reset-requests')).toBe('600ms');
    expect(Number(response.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(100000 - 50);
  });

  it('does not charge a request the system-prompt rule rejects', async () => {
    gw = await startGateway({
      CATALOG_PATH: CATALOG,
      REDIS_URL: '', // in memory, even when the environment points at a Redis
      RATE_LIMIT_REQUESTS_PER_MINUTE: '1',
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    await failure(
      client.chat.completions.create({ model: 'small-gpt', messages: [user('no system prompt')] }),
    );
    const ok = await client.chat.completions.create({
      model: 'small-gpt',
      messages: [SYSTEM, user('hi')],
    });
    expect(ok.choices[0].message.content).toBe('Echo: hi');
    const err = await failure(
      client.chat.completions.create({ model: 'small-gpt', messages: [SYSTEM, user('hi')] }),
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('applies per-key and per-model limits from the keys file, each key in its own bucket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    const keysFile = join(dir, 'keys.yaml');
    writeFileSync(
      keysFile,
      `
defaults: { requests_per_minute: 1 }
keys:
  - name: gold
    sha256: ${sha256Hex('gold-key')}
    limits: { requests_per_minute: 3 }
    models:
      small-claude: { requests_per_minute: 1 }
  - name: env-held
    key_env: LIMITS_E2E_SILVER_KEY
`,
    );
    process.env.LIMITS_E2E_SILVER_KEY = 'silver-key';
    try {
      gw = await startGateway({
        CATALOG_PATH: CATALOG,
        REDIS_URL: '', // in memory, even when the environment points at a Redis
        GATEWAY_KEYS_FILE: keysFile,
      });
    } finally {
      delete process.env.LIMITS_E2E_SILVER_KEY;
    }
    const as = (apiKey: string) => new OpenAI({ baseURL: gw.baseURL, apiKey, maxRetries: 0 });
    const ask = (apiKey: string, model = 'small-gpt') =>
      as(apiKey)
        .chat.completions.create({ model, messages: [SYSTEM, user('hi')] })
        .then(
          () => 200,
          (e: InstanceType<typeof OpenAI.APIError>) => e.status,
        );
    expect(await ask('gold-key', 'small-claude')).toBe(200);
    expect(await ask('gold-key', 'small-claude')).toBe(429);
    expect([await ask('gold-key'), await ask('gold-key'), await ask('gold-key')]).toEqual([
      200, 200, 429,
    ]);
    expect([await ask('silver-key'), await ask('silver-key')]).toEqual([200, 429]);
    expect([await ask(TEST_KEY), await ask(TEST_KEY)]).toEqual([200, 429]);
    expect(await ask('unknown-key')).toBe(401);
  });
});
