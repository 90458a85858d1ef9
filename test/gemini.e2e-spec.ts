import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GEMINI_USAGE, geminiReply } from './support/fake-gemini';
import { FakeUpstream } from './support/fake-upstream';
import { TEST_KEY, type TestGateway, startGateway, writeCatalog } from './support/gateway';

/**
 * Google Gemini (`kind: gemini`), reached from all three endpoints through the translators,
 * against a fake Gemini API on loopback: text, a tool round trip with a signed call,
 * thought summaries, usage, and a safety stop as `content_filter`.
 */

const SYSTEM = 'You are a terse assistant.';
const MODEL_PATH = '/v1beta/models/gemini-upstream-2.5';
const WEATHER = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
/** Output as the client sees it: candidates plus thoughts. */
const OUTPUT_TOKENS = GEMINI_USAGE.candidatesTokenCount + GEMINI_USAGE.thoughtsTokenCount;

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  const catalog = writeCatalog(`
providers:
  - name: google
    kind: gemini
    base_url: ${upstream.url}/v1beta
    api_key_env: TEST_UPSTREAM_KEY
models:
  - id: gemini-test
    upstream_id: gemini-upstream-2.5
    provider: google
    family: gemini
    context_window: 1000000
    max_output_tokens: 65536
    pricing: { input: 0.3, output: 2.5 }
    capabilities: { reasoning: true, tools: true, vision: true }
    endpoints: [chat_completions, responses, messages]
`);
  gw = await startGateway({ CATALOG_PATH: catalog });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.origin, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => {
  upstream.reset();
  upstream.on(`${MODEL_PATH}:generateContent`, (req) => geminiReply(req, false));
  upstream.on(`${MODEL_PATH}:streamGenerateContent`, (req) => geminiReply(req, true));
});

describe('Gemini from /v1/chat/completions', () => {
  it('answers a plain request, with systemInstruction and usage', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gemini-test',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(completion.choices[0].message.content).toBe('Hello from Gemini.');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({
      prompt_tokens: GEMINI_USAGE.promptTokenCount,
      completion_tokens: OUTPUT_TOKENS,
    });
    const sent = upstream.last();
    expect(sent.path).toBe(`${MODEL_PATH}:generateContent`);
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      systemInstruction: { parts: [{ text: SYSTEM }] },
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
      .stream({ model: 'gemini-test', messages: history, tools })
      .finalChatCompletion();
    const call = first.choices[0].message.tool_calls![0];
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    expect(upstream.last().url).toBe(`${MODEL_PATH}:streamGenerateContent?alt=sse`);
    history.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await openai.chat.completions
      .stream({ model: 'gemini-test', messages: history, tools })
      .finalChatCompletion();
    expect(second.choices[0].message.content).toBe('The tool said: 18C');
    expect(upstream.last().body.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: call.id, name: 'get_weather', response: { output: '18C' } } },
      ],
    });
  });

  it('reports a safety stop as content_filter', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gemini-test',
      messages: [
        { role: 'system', content: `${SYSTEM} [unsafe]` },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('content_filter');
  });
});

describe('Gemini from /v1/messages', () => {
  it('streams thought summaries as thinking, and gives the signature back on the call', async () => {
    const tools = [{ name: 'get_weather', input_schema: WEATHER }];
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const first = await anthropic.messages
      .stream({
        model: 'gemini-test',
        max_tokens: 4096,
        system: SYSTEM,
        thinking,
        tools,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      })
      .finalMessage();
    expect(upstream.last().body.generationConfig.thinkingConfig).toEqual({
      thinkingBudget: 2048,
      includeThoughts: true,
    });
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(first.content[0]).toMatchObject({ thinking: 'Considering the request.' });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.usage).toMatchObject({ output_tokens: OUTPUT_TOKENS });
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    await anthropic.messages.create({
      model: 'gemini-test',
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
    expect(upstream.last().body.contents[1]).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { id: toolUse.id, name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: 'R2VtaW5pU2lnbmF0dXJl',
        },
      ],
    });
  });
});

describe('Gemini from /v1/responses', () => {
  it('answers through the Responses stream helper, with usage', async () => {
    const response = await openai.responses
      .stream({ model: 'gemini-test', instructions: SYSTEM, input: 'Hi' })
      .finalResponse();
    expect(response.output_text).toBe('Hello from Gemini.');
    expect(response.usage).toMatchObject({
      input_tokens: GEMINI_USAGE.promptTokenCount,
      output_tokens: OUTPUT_TOKENS,
    });
    expect(upstream.last().body.systemInstruction).toEqual({ parts: [{ text: SYSTEM }] });
  });

  it('passes an upstream error on with its status', async () => {
    upstream.on(`${MODEL_PATH}:generateContent`, () => ({
      status: 429,
      json: { error: { code: 429, message: 'Quota exceeded.', status: 'RESOURCE_EXHAUSTED' } },
    }));
    await expect(
      openai.responses.create({ model: 'gemini-test', instructions: SYSTEM, input: 'Hi' }),
    ).rejects.toMatchObject({ status: 429 });
  });
});
