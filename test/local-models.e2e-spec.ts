import OpenAI from 'openai';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from './support/gateway';

const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', default: 'celsius' } },
      required: ['city'],
    },
  },
};

describe('the embedded local models on /v1/chat/completions', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    // No upstream at all: the local provider needs no network.
    gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      LOCAL_MODEL_TOKEN_DELAY_MS: '1',
    });
    client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(() => gw.close());

  it.each(['local-echo-gpt', 'local-echo-claude'])(
    '%s echoes the last user message',
    async (model) => {
      const completion = await client.chat.completions.create({
        model,
        messages: [
          SYSTEM,
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'x' },
          { role: 'user', content: 'ping pong' },
        ],
      });
      expect(completion.choices[0].message.content).toBe('Echo: ping pong');
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.model).toBe(model);
      expect(completion.usage?.completion_tokens).toBe(3);
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
    },
  );

  it('streams token by token and satisfies the stream helper', async () => {
    const stream = client.chat.completions.stream({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'one two three four' }],
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(deltas).toEqual(['Echo:', ' one', ' two', ' three', ' four']);
    expect(final.choices[0].message.content).toBe('Echo: one two three four');
    expect(final.usage?.completion_tokens).toBe(5);
  });

  it('produces reasoning when asked for it, and none otherwise', async () => {
    const withReasoning = await client.chat.completions.create({
      model: 'local-echo-gpt',
      reasoning_effort: 'high',
      messages: [SYSTEM, { role: 'user', content: 'think first' }],
    });
    const message = withReasoning.choices[0].message as unknown as { reasoning_content?: string };
    expect(message.reasoning_content).toMatch(/^The user sent a message of 2 words\./);
    expect(withReasoning.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);

    const without = await client.chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'just answer' }],
    });
    expect(
      (without.choices[0].message as unknown as { reasoning_content?: string }).reasoning_content,
    ).toBeUndefined();
  });

  it('streams reasoning as delta.reasoning_content before the answer', async () => {
    const stream = await client.chat.completions.create({
      model: 'local-echo-gpt',
      reasoning_effort: 'low',
      stream: true,
      messages: [SYSTEM, { role: 'user', content: 'hi' }],
    });
    const kinds: string[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as
        { content?: string; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) {
        kinds.push('reasoning');
      } else if (delta?.content) {
        kinds.push('content');
      }
    }
    expect(kinds.indexOf('content')).toBeGreaterThan(kinds.lastIndexOf('reasoning'));
    expect(kinds.filter((k) => k === 'reasoning').length).toBeGreaterThan(3);
  });

  it('calls a tool the user names, with arguments from the message and the schema', async () => {
    const stream = client.chat.completions.stream({
      model: 'local-echo-gpt',
      tools: [WEATHER_TOOL],
      messages: [SYSTEM, { role: 'user', content: 'use get_weather with city=Paris' }],
    });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0].message.tool_calls?.[0];
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({
      city: 'Paris',
      unit: 'celsius',
    });
    expect(call?.id).toMatch(/^call_/);
  });

  it('answers a tool result on the next turn, matching the call id', async () => {
    const first = await client.chat.completions.create({
      model: 'local-echo-gpt',
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [SYSTEM, { role: 'user', content: 'city=Oslo' }],
    });
    const call = first.choices[0].message.tool_calls![0];
    const second = await client.chat.completions.create({
      model: 'local-echo-gpt',
      tools: [WEATHER_TOOL],
      messages: [
        SYSTEM,
        { role: 'user', content: 'city=Oslo' },
        first.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: '4 degrees and snow' },
      ],
    });
    expect(second.choices[0].message.content).toBe('Tool get_weather returned: 4 degrees and snow');
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const completion = await client.chat.completions.create({
      model: 'local-echo-claude',
      max_completion_tokens: 2,
      messages: [SYSTEM, { role: 'user', content: 'a b c d e f' }],
    });
    expect(completion.choices[0].message.content).toBe('Echo: a');
    expect(completion.choices[0].finish_reason).toBe('length');
  });
});
