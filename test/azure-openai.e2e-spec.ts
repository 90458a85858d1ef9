import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chatCompletion, textStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { TEST_KEY, type TestGateway, startGateway, writeCatalog } from './support/gateway';

/**
 * Azure OpenAI (`kind: azure-openai`), the OpenAI provider with Azure's addressing: every
 * call goes to a deployment-named URL (or the resource's /openai/responses) with the
 * `api-version` query parameter and the key in `api-key`, never `Authorization`.
 */

const SYSTEM = 'You are a terse assistant.';
const DEPLOYMENT = 'gpt-4o-prod';
const CHAT_PATH = `/openai/deployments/${DEPLOYMENT}/chat/completions`;

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  const catalog = writeCatalog(`
providers:
  - name: azure
    kind: azure-openai
    base_url: ${upstream.url}
    api_key_env: TEST_UPSTREAM_KEY
    api_version: '2025-04-01-preview'
  - name: azure-default-version
    kind: azure-openai
    base_url: ${upstream.url}/other
    api_key_env: TEST_UPSTREAM_KEY
models:
  - { id: azure-gpt, upstream_id: ${DEPLOYMENT}, provider: azure, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
  - { id: azure-responses, upstream_id: ${DEPLOYMENT}, provider: azure, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, upstream_api: responses }
  - { id: azure-ga, upstream_id: ${DEPLOYMENT}, provider: azure-default-version, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
`);
  gw = await startGateway({ CATALOG_PATH: catalog });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => upstream.reset());

function expectAzureCall(path: string, version = '2025-04-01-preview'): void {
  const sent = upstream.last();
  expect(sent.path).toBe(path);
  expect(new URL(sent.url, 'http://x').searchParams.get('api-version')).toBe(version);
  expect(sent.headers['api-key']).toBe('sk-upstream-secret');
  expect(sent.headers.authorization).toBeUndefined();
}

describe('Azure OpenAI', () => {
  it('relays chat completions to the deployment URL with api-version and api-key', async () => {
    upstream.on(CHAT_PATH, () => ({ json: chatCompletion(DEPLOYMENT, 'Hello from Azure.') }));
    const completion = await openai.chat.completions.create({
      model: 'azure-gpt',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Azure.');
    expect(completion.model).toBe('azure-gpt');
    expectAzureCall(CHAT_PATH);
    expect(upstream.last().body.model).toBe(DEPLOYMENT);
  });

  it('streams chat completions from the deployment', async () => {
    upstream.on(CHAT_PATH, () => ({
      sse: [...textStream(DEPLOYMENT, ['Hel', 'lo'], true), '[DONE]'],
    }));
    const stream = openai.chat.completions.stream({
      model: 'azure-gpt',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Hello');
    expectAzureCall(CHAT_PATH);
  });

  it('translates a Messages request to the deployment, with max_completion_tokens', async () => {
    upstream.on(CHAT_PATH, () => ({ json: chatCompletion(DEPLOYMENT, 'Translated.') }));
    const anthropic = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: 'azure-gpt',
      max_tokens: 100,
      system: SYSTEM,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Translated.' }]);
    expectAzureCall(CHAT_PATH);
    expect(upstream.last().body).toMatchObject({ model: DEPLOYMENT, max_completion_tokens: 100 });
  });

  it("sends Responses API calls to the resource's /openai/responses with the deployment as model", async () => {
    upstream.on('/openai/responses', () => ({
      json: {
        id: 'resp_1',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: DEPLOYMENT,
        output: [
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Via responses.', annotations: [] }],
          },
        ],
        usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
      },
    }));
    const response = await openai.responses.create({
      model: 'azure-responses',
      instructions: SYSTEM,
      input: 'Hi',
    });
    expect(response.output_text).toBe('Via responses.');
    expectAzureCall('/openai/responses');
    expect(upstream.last().body.model).toBe(DEPLOYMENT);
  });

  it('defaults api-version to the GA version when the catalog sets none', async () => {
    upstream.on(`/other${CHAT_PATH}`, () => ({ json: chatCompletion(DEPLOYMENT, 'GA.') }));
    await openai.chat.completions.create({
      model: 'azure-ga',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });
    expectAzureCall(`/other${CHAT_PATH}`, '2024-10-21');
  });
});
