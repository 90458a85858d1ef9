import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { BEDROCK_SIGNATURE, BEDROCK_USAGE, FakeBedrock } from './support/fake-bedrock';
import { TEST_KEY, type TestGateway, startGateway, writeCatalog } from './support/gateway';
import { SuiteEnv, recordingClients } from './support/cloud-kit';

/**
 * Amazon Bedrock (`kind: bedrock`) from all three endpoints, streamed and not, against a
 * fake Converse API on loopback that verifies every SigV4 signature: credentials from the
 * AWS environment variables, the catalog's region signed although `AWS_REGION` says
 * another; text, tools, Claude thinking with its signature given back, usage with cache
 * tokens, and Bedrock's exceptions (HTTP and in-stream) with their status and retries.
 * No AWS secret reaches an answer or a log line.
 */

const IDENTITY = {
  accessKeyId: 'AKIAGATEWAYTEST00001',
  secretAccessKey: 'gw/Secret+Access/Key0123456789abcdefghijk',
  sessionToken: 'IQoJb3JpZ2luX2VjEGatewaySessionToken0123456789xyz',
};
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const SYSTEM = 'You are a terse assistant.';
const WEATHER = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
/** What the client sees as input: Converse's input plus cache reads and writes. */
const INPUT =
  BEDROCK_USAGE.inputTokens +
  BEDROCK_USAGE.cacheReadInputTokens +
  BEDROCK_USAGE.cacheWriteInputTokens;

const AWS_ENV = {
  AWS_ACCESS_KEY_ID: IDENTITY.accessKeyId,
  AWS_SECRET_ACCESS_KEY: IDENTITY.secretAccessKey,
  AWS_SESSION_TOKEN: IDENTITY.sessionToken,
  // The catalog's region is the one signed.
  AWS_REGION: 'eu-central-1',
};

let fake: FakeBedrock;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
const env = new SuiteEnv();
/** Every answer body the clients got, checked for secrets at the end. */
const answers: string[] = [];

function catalog(url: string): string {
  return writeCatalog(`
providers:
  - name: aws
    kind: bedrock
    region: us-west-2
    base_url: ${url}
models:
  - id: claude-bedrock
    upstream_id: ${MODEL}
    provider: aws
    family: anthropic
    context_window: 200000
    max_output_tokens: 64000
    pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 }
    capabilities: { reasoning: true, tools: true, vision: true }
    endpoints: [chat_completions, responses, messages]
`);
}

beforeAll(async () => {
  // The credential chain reads the environment when it first resolves, after boot.
  env.set(AWS_ENV);
  fake = await new FakeBedrock(IDENTITY, 'us-west-2').start();
  gw = await startGateway({ CATALOG_PATH: catalog(fake.url), LOG_LEVEL: 'trace' });
  ({ openai, anthropic } = recordingClients(gw, answers));
});
afterAll(async () => {
  await gw?.close();
  await fake?.stop();
  env.restore();
});
beforeEach(() => fake.reset());

describe('Bedrock from /v1/chat/completions', () => {
  it('answers a plain request through a signed Converse call, with usage and cache tokens', async () => {
    const completion = await openai.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 200,
      temperature: 0.5,
      stop: ['END'],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Bedrock.');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.model).toBe('claude-bedrock');
    expect(completion.usage).toMatchObject({
      prompt_tokens: INPUT,
      completion_tokens: BEDROCK_USAGE.outputTokens,
      prompt_tokens_details: { cached_tokens: BEDROCK_USAGE.cacheReadInputTokens },
    });
    const call = fake.last();
    expect(call).toMatchObject({ modelId: MODEL, stream: false, region: 'us-west-2' });
    expect(call.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);
    expect(call.headers['x-amz-security-token']).toBe(IDENTITY.sessionToken);
    expect(call.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      system: [{ text: SYSTEM }],
      inferenceConfig: { maxTokens: 200, temperature: 0.5, stopSequences: ['END'] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    });
  });

  it('streams a tool round trip over two turns', async () => {
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } },
    ];
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const first = await openai.chat.completions
      .stream({ model: 'claude-bedrock', messages: history, tools, tool_choice: 'required' })
      .finalChatCompletion();
    const call = first.choices[0].message.tool_calls![0];
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    expect(call.id).toBe('tooluse_bdrk_1');
    expect(fake.last()).toMatchObject({ stream: true });
    expect(fake.last().body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: WEATHER } } }],
      toolChoice: { any: {} },
    });
    history.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await openai.chat.completions
      .stream({
        model: 'claude-bedrock',
        messages: history,
        tools,
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(second.choices[0].message.content).toBe('The tool said: 18C');
    expect(second.usage).toMatchObject({ prompt_tokens: INPUT });
    expect(fake.last().body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          {
            toolUse: { toolUseId: 'tooluse_bdrk_1', name: 'get_weather', input: { city: 'Paris' } },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: {
              toolUseId: 'tooluse_bdrk_1',
              content: [{ text: '18C' }],
              status: 'success',
            },
          },
        ],
      },
    ]);
  });

  it('continues a tool history without tools and with an empty result, as Converse requires', async () => {
    const completion = await openai.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('The tool said: (no output)');
  });

  it('sends an image as bytes and refuses an image link Bedrock cannot fetch', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    await openai.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'system', content: SYSTEM },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    expect(fake.last().body.messages[0].content[1]).toEqual({
      image: { format: 'png', source: { bytes: png } },
    });
    const calls = fake.calls.length;
    await expect(
      openai.chat.completions.create({
        model: 'claude-bedrock',
        messages: [
          { role: 'system', content: SYSTEM },
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
          },
        ],
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(fake.calls).toHaveLength(calls);
  });
});

describe('Bedrock from /v1/messages', () => {
  it('streams Claude thinking with its signature, and gives the signed block back', async () => {
    const tools = [{ name: 'get_weather', input_schema: WEATHER }];
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const first = await anthropic.messages
      .stream({
        model: 'claude-bedrock',
        max_tokens: 4096,
        system: SYSTEM,
        thinking,
        tools,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      })
      .finalMessage();
    expect(fake.last().body.additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(first.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Considering the request.',
      signature: BEDROCK_SIGNATURE,
    });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.usage).toMatchObject({
      output_tokens: BEDROCK_USAGE.outputTokens,
      cache_read_input_tokens: BEDROCK_USAGE.cacheReadInputTokens,
      cache_creation_input_tokens: BEDROCK_USAGE.cacheWriteInputTokens,
    });
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    const second = await anthropic.messages.create({
      model: 'claude-bedrock',
      max_tokens: 4096,
      system: SYSTEM,
      thinking,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18C' }],
        },
      ],
    });
    expect(fake.last().body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {
          reasoningContent: {
            reasoningText: { text: 'Considering the request.', signature: BEDROCK_SIGNATURE },
          },
        },
        { toolUse: { toolUseId: toolUse.id, name: 'get_weather', input: { city: 'Paris' } } },
      ],
    });
    expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(second.content[1]).toMatchObject({ text: 'The tool said: 18C' });
  });
});

describe('Bedrock from /v1/responses', () => {
  it('answers through the Responses stream helper and unstreamed', async () => {
    const streamed = await openai.responses
      .stream({ model: 'claude-bedrock', instructions: SYSTEM, input: 'Hi' })
      .finalResponse();
    expect(streamed.output_text).toBe('Hello from Bedrock.');
    expect(streamed.usage).toMatchObject({ input_tokens: INPUT, output_tokens: 9 });
    expect(fake.last()).toMatchObject({ stream: true });
    const plain = await openai.responses.create({
      model: 'claude-bedrock',
      instructions: SYSTEM,
      input: 'Hi',
    });
    expect(plain.output_text).toBe('Hello from Bedrock.');
    expect(fake.last()).toMatchObject({ stream: false });
  });
});

describe("Bedrock's errors", () => {
  const ask = (): Promise<unknown> =>
    openai.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });

  it.each([
    ['ThrottlingException', 429, 429, 'rate_limit_exceeded'],
    ['ValidationException', 400, 400, null],
    ['ModelNotReadyException', 429, 503, 'model_not_ready'],
    ['ServiceUnavailableException', 503, 503, 'upstream_overloaded'],
    ['InternalServerException', 500, 502, 'upstream_error'],
    ['ModelTimeoutException', 408, 504, 'upstream_timeout'],
  ])('%s (HTTP %d) reaches the client as %d', async (type, status, expected, code) => {
    fake.script.push({ status, type, message: `Bedrock says ${type}.` });
    const error = await ask().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: expected, code });
    expect((error as Error).message).toContain(`Bedrock says ${type}.`);
  });

  it('an error body that is not an object still gets the status of its exception type', async () => {
    fake.script.push({ status: 429, type: 'ThrottlingException', message: '', rawBody: 'null' });
    await expect(ask()).rejects.toMatchObject({ status: 429 });
    fake.script.push({ status: 503, type: '', message: '', rawBody: '<html>busy</html>' });
    await expect(ask()).rejects.toMatchObject({ status: 503, code: 'upstream_overloaded' });
    fake.script.push({ status: 500, type: '', message: '', rawBody: '<html>oops</html>' });
    await expect(ask()).rejects.toMatchObject({ status: 502, code: 'upstream_error' });
  });

  it('AccessDeniedException is the gateway credentials failing: 502, the role left out', async () => {
    fake.script.push({
      status: 403,
      type: 'AccessDeniedException',
      message:
        'User: arn:aws:sts::123456789012:assumed-role/gateway/i-0abc is not authorized to perform: bedrock:InvokeModel',
    });
    const error = await ask().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
    expect((error as Error).message).not.toContain('arn:aws');
  });

  it('an exception before the first event keeps its status; a later one ends the stream', async () => {
    fake.script.push({ exception: 'throttlingException', message: 'Slow down.', before: 0 });
    await expect(
      anthropic.messages
        .stream({
          model: 'claude-bedrock',
          max_tokens: 100,
          system: SYSTEM,
          messages: [{ role: 'user', content: 'Hi' }],
        })
        .finalMessage(),
    ).rejects.toMatchObject({ status: 429 });
    fake.script.push({
      exception: 'modelStreamErrorException',
      message: 'The model broke.',
      before: 2,
    });
    const stream = anthropic.messages.stream({
      model: 'claude-bedrock',
      max_tokens: 100,
      system: SYSTEM,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    await expect(stream.finalMessage()).rejects.toThrow(/The model broke/);
  });

  it('retries what another attempt can fix, and only that', async () => {
    const retrying = await startGateway({
      CATALOG_PATH: catalog(fake.url),
      UPSTREAM_RETRY_ATTEMPTS: '2',
      UPSTREAM_RETRY_BACKOFF_MS: '1',
    });
    try {
      const client = new OpenAI({ baseURL: retrying.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
      const body = {
        model: 'claude-bedrock',
        messages: [
          { role: 'system' as const, content: SYSTEM },
          { role: 'user' as const, content: 'Hi' },
        ],
      };
      fake.script.push({ status: 429, type: 'ModelNotReadyException', message: 'Loading.' });
      const ok = await client.chat.completions.create(body);
      expect(ok.choices[0].message.content).toBe('Hello from Bedrock.');
      expect(fake.calls).toHaveLength(2);
      fake.reset();
      fake.script.push({ status: 400, type: 'ValidationException', message: 'Bad input.' });
      await expect(client.chat.completions.create(body)).rejects.toMatchObject({ status: 400 });
      expect(fake.calls).toHaveLength(1);
    } finally {
      await retrying.close();
    }
  });
});

describe('AWS secrets', () => {
  it('a signature AWS rejects (its message quoting the security token) leaks nothing', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'a-wrong-secret-for-this-test';
    const other = await startGateway({ CATALOG_PATH: catalog(fake.url), LOG_LEVEL: 'trace' });
    try {
      const client = new OpenAI({ baseURL: other.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
      const error = await client.chat.completions
        .create({
          model: 'claude-bedrock',
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: 'Hi' },
          ],
        })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
      const seen = JSON.stringify(error) + other.rawLogs.join('');
      expect(seen).not.toContain(IDENTITY.sessionToken);
      expect(seen).not.toContain('a-wrong-secret-for-this-test');
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = IDENTITY.secretAccessKey;
      await other.close();
    }
  });

  it('no answer and no log line carries the secret key or the session token', () => {
    const all = answers.join('') + gw.rawLogs.join('');
    expect(answers.length).toBeGreaterThan(5);
    expect(gw.rawLogs.length).toBeGreaterThan(5);
    expect(all).not.toContain(IDENTITY.secretAccessKey);
    expect(all).not.toContain(IDENTITY.sessionToken);
  });
});
