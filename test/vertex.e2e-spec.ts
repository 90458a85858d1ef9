import { generateKeyPairSync } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GEMINI_USAGE } from './support/fake-gemini';
import {
  CLAUDE_USAGE,
  CLIENT_EMAIL,
  FakeVertex,
  LOCATION,
  PROJECT,
  VERTEX_VERSION,
} from './support/fake-vertex';
import { TEST_KEY, type TestGateway, startGateway, writeCatalog } from './support/gateway';
import { SuiteEnv, recordingClients } from './support/cloud-kit';

/**
 * Google Vertex AI (`kind: vertex`) from all three endpoints, streamed and not: Claude
 * through rawPredict (the Messages fast path rewrites the body for Vertex; the other
 * formats translate), Gemini through generateContent. Tokens come from a service-account
 * file whose `token_uri` points at a fake token endpoint that verifies the signed JWT,
 * are cached, and are refreshed once on a 401; on GKE they come from the metadata server.
 */

const CLAUDE = 'claude-sonnet-4-5@20250929';
const GEMINI = 'gemini-2.5-pro';
const SYSTEM = 'You are a terse assistant.';
const WEATHER = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
const CLAUDE_INPUT =
  CLAUDE_USAGE.input_tokens +
  CLAUDE_USAGE.cache_creation_input_tokens +
  CLAUDE_USAGE.cache_read_input_tokens;

let fake: FakeVertex;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
const env = new SuiteEnv();
const answers: string[] = [];

function catalog(url: string): string {
  return writeCatalog(`
providers:
  - name: gcp
    kind: vertex
    project: ${PROJECT}
    location: ${LOCATION}
    base_url: ${url}
models:
  - id: claude-vertex
    upstream_id: '${CLAUDE}'
    upstream_api: messages
    provider: gcp
    family: anthropic
    context_window: 200000
    max_output_tokens: 64000
    pricing: { input: 3, output: 15 }
    capabilities: { reasoning: true, tools: true }
    endpoints: [chat_completions, responses, messages]
  - id: gemini-vertex
    upstream_id: ${GEMINI}
    upstream_api: gemini
    provider: gcp
    family: gemini
    context_window: 1000000
    max_output_tokens: 65536
    pricing: { input: 1.25, output: 10 }
    capabilities: { reasoning: true, tools: true }
    endpoints: [chat_completions, responses, messages]
`);
}

const plainMessages = {
  model: 'claude-vertex',
  max_tokens: 200,
  system: SYSTEM,
  messages: [{ role: 'user' as const, content: 'Hi' }],
};

beforeAll(async () => {
  fake = await new FakeVertex().start();
  fake.serve('anthropic', CLAUDE).serve('google', GEMINI);
  // Read when the first token is needed, after boot: set for the whole suite.
  env.set({ GOOGLE_APPLICATION_CREDENTIALS: fake.keyFile(), GCE_METADATA_HOST: undefined });
  gw = await startGateway({ CATALOG_PATH: catalog(fake.url), LOG_LEVEL: 'trace' });
  ({ openai, anthropic } = recordingClients(gw, answers));
});
afterAll(async () => {
  await gw?.close();
  await fake?.stop();
  env.restore();
});
beforeEach(() => fake.reset());

describe('Claude on Vertex from /v1/messages (the fast path)', () => {
  it('sends the client body to rawPredict without model, with the Vertex version, every field kept', async () => {
    const message = await anthropic.messages.create({
      ...plainMessages,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Claude on Vertex.' }]);
    expect(message.model).toBe('claude-vertex');
    const call = fake.lastCall();
    expect(call.path).toBe(
      `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models/${CLAUDE}:rawPredict`,
    );
    expect(call.body).toEqual({
      anthropic_version: VERTEX_VERSION,
      max_tokens: 200,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(String(call.headers.authorization)).toMatch(/^Bearer ya29\.sa-/);
  });

  it('streams through streamRawPredict with the client beta header, usage with cache tokens', async () => {
    const message = await anthropic.messages
      .stream(plainMessages, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Claude on Vertex.' }]);
    expect(message.usage).toMatchObject({
      input_tokens: CLAUDE_USAGE.input_tokens,
      cache_read_input_tokens: CLAUDE_USAGE.cache_read_input_tokens,
      output_tokens: CLAUDE_USAGE.output_tokens,
    });
    const call = fake.lastCall();
    expect(call.path.endsWith(':streamRawPredict')).toBe(true);
    expect(call.body).toMatchObject({ anthropic_version: VERTEX_VERSION, stream: true });
    expect(call.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });

  it('passes an overloaded Claude on with its 529', async () => {
    fake.script.push({
      status: 529,
      json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    await expect(anthropic.messages.create(plainMessages)).rejects.toMatchObject({ status: 529 });
  });
});

describe('Claude on Vertex from the OpenAI endpoints (translated)', () => {
  it('streams a chat tool round trip', async () => {
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } },
    ];
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const first = await openai.chat.completions
      .stream({ model: 'claude-vertex', messages: history, tools })
      .finalChatCompletion();
    const call = first.choices[0].message.tool_calls![0];
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.arguments).toBe('{"city":"Paris"}');
    const sent = fake.lastCall();
    expect(sent.path.endsWith(':streamRawPredict')).toBe(true);
    expect(sent.body.anthropic_version).toBe(VERTEX_VERSION);
    expect('model' in sent.body).toBe(false);
    history.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await openai.chat.completions.create({
      model: 'claude-vertex',
      messages: history,
      tools,
    });
    expect(second.choices[0].message.content).toBe('The tool said: 18C');
    expect(second.usage).toMatchObject({ prompt_tokens: CLAUDE_INPUT });
    expect(fake.lastCall().path.endsWith(':rawPredict')).toBe(true);
  });

  it('answers the Responses API, streamed and not', async () => {
    const streamed = await openai.responses
      .stream({ model: 'claude-vertex', instructions: SYSTEM, input: 'Hi' })
      .finalResponse();
    expect(streamed.output_text).toBe('Hello from Claude on Vertex.');
    const plain = await openai.responses.create({
      model: 'claude-vertex',
      instructions: SYSTEM,
      input: 'Hi',
    });
    expect(plain.output_text).toBe('Hello from Claude on Vertex.');
  });
});

describe('Gemini on Vertex', () => {
  it('answers chat completions through generateContent, and streams through alt=sse', async () => {
    const plain = await openai.chat.completions.create({
      model: 'gemini-vertex',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(plain.choices[0].message.content).toBe('Hello from Gemini.');
    expect(plain.usage).toMatchObject({ prompt_tokens: GEMINI_USAGE.promptTokenCount });
    expect(fake.lastCall().path).toBe(
      `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${GEMINI}:generateContent`,
    );
    expect(fake.lastCall().body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: SYSTEM }] },
    });
    const streamed = await openai.chat.completions
      .stream({
        model: 'gemini-vertex',
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'Hi' },
        ],
      })
      .finalChatCompletion();
    expect(streamed.choices[0].message.content).toBe('Hello from Gemini.');
    expect(fake.lastCall().url.endsWith(':streamGenerateContent?alt=sse')).toBe(true);
  });

  it('answers /v1/messages and /v1/responses', async () => {
    const message = await anthropic.messages
      .stream({ ...plainMessages, model: 'gemini-vertex' })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Gemini.' }]);
    const response = await openai.responses.create({
      model: 'gemini-vertex',
      instructions: SYSTEM,
      input: 'Hi',
    });
    expect(response.output_text).toBe('Hello from Gemini.');
  });

  it('passes quota exhaustion on as a 429', async () => {
    fake.script.push({
      status: 429,
      json: { error: { code: 429, message: 'Quota exceeded.', status: 'RESOURCE_EXHAUSTED' } },
    });
    await expect(
      openai.chat.completions.create({
        model: 'gemini-vertex',
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'Hi' },
        ],
      }),
    ).rejects.toMatchObject({ status: 429 });
  });
});

describe('Google credentials', () => {
  it('signs a JWT for the file token_uri, and caches the token across calls', async () => {
    // A gateway of its own, so that no earlier test fetched the token already.
    const own = await startGateway({ CATALOG_PATH: catalog(fake.url) });
    try {
      const client = new Anthropic({ baseURL: own.origin, apiKey: TEST_KEY, maxRetries: 0 });
      await Promise.all([
        client.messages.create(plainMessages),
        client.messages.create(plainMessages),
      ]);
      await client.messages.create(plainMessages);
      expect(fake.calls()).toHaveLength(3);
      expect(fake.grants).toHaveLength(1);
      expect(fake.grants[0]).toMatchObject({
        iss: CLIENT_EMAIL,
        aud: fake.tokenUri,
        scope: 'https://www.googleapis.com/auth/cloud-platform',
      });
    } finally {
      await own.close();
    }
  });

  it('gets a new token once when Vertex answers 401, and sends the call again', async () => {
    await anthropic.messages.create(plainMessages);
    fake.reset();
    fake.revokeAll();
    const message = await anthropic.messages.create(plainMessages);
    expect(message.content[0]).toMatchObject({ text: 'Hello from Claude on Vertex.' });
    expect(fake.grants).toHaveLength(1);
    const calls = fake.calls();
    expect(calls).toHaveLength(2);
    expect(calls[0].headers.authorization).not.toBe(calls[1].headers.authorization);
  });

  it('a key the token endpoint refuses is a 502 for the client, with nothing secret logged', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const wrongKey = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    env.set({ GOOGLE_APPLICATION_CREDENTIALS: fake.keyFile(wrongKey) });
    const other = await startGateway({ CATALOG_PATH: catalog(fake.url), LOG_LEVEL: 'trace' });
    try {
      const client = new Anthropic({ baseURL: other.origin, apiKey: TEST_KEY, maxRetries: 0 });
      const error = await client.messages.create(plainMessages).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 502 });
      expect(fake.calls()).toHaveLength(0);
      const logs = other.rawLogs.join('');
      expect(logs).toContain('no Google access token');
      expect(logs).not.toContain('PRIVATE KEY');
      expect(logs).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
    } finally {
      env.set({ GOOGLE_APPLICATION_CREDENTIALS: fake.keyFile() });
      await other.close();
    }
  });

  it('on GKE takes the token from the metadata server (Workload Identity)', async () => {
    env.set({
      GOOGLE_APPLICATION_CREDENTIALS: undefined,
      GCE_METADATA_HOST: new URL(fake.url).host,
    });
    const gke = await startGateway({ CATALOG_PATH: catalog(fake.url) });
    try {
      const client = new Anthropic({ baseURL: gke.origin, apiKey: TEST_KEY, maxRetries: 0 });
      const message = await client.messages.create(plainMessages);
      expect(message.content[0]).toMatchObject({ text: 'Hello from Claude on Vertex.' });
      expect(String(fake.lastCall().headers.authorization)).toMatch(/^Bearer ya29\.meta-/);
      expect(fake.metadataFetches).toHaveLength(1);
      expect(fake.grants).toHaveLength(0);
    } finally {
      env.set({ GOOGLE_APPLICATION_CREDENTIALS: fake.keyFile(), GCE_METADATA_HOST: undefined });
      await gke.close();
    }
  });

  it('no answer and no log line carries a token or the private key', () => {
    const all = answers.join('') + gw.rawLogs.join('');
    expect(answers.length).toBeGreaterThan(5);
    expect(all).not.toMatch(/ya29\./);
    expect(all).not.toContain('PRIVATE KEY');
    expect(all).not.toContain(fake.privateKey.split('\n')[1]);
  });
});
