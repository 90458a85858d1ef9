import OpenAI from 'openai';
import { chatCompletion, recordedLines } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import {
  adminKeysFile,
  startGateway,
  TEST_KEY,
  testCatalog,
  writeCatalog,
  type TestGateway,
} from './support/gateway';
import {
  asSse,
  collect,
  checkResponseStream,
  responsesObject,
  responsesStream,
  RESPONSES_USAGE,
  type UpstreamItem,
} from './support/responses-fixtures';
import { parseSse } from './support/sse';
import { rejection as rejectionOf } from './support/rejection';
import { post as httpPost } from './support/http';

const INSTRUCTIONS = 'You are a terse assistant.';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const REASONED_ANSWER: UpstreamItem[] = [
  { kind: 'reasoning', summaries: ['**Greeting**\n\nThe user wants French.'] },
  { kind: 'message', pieces: ['Bon', 'jour', '!'] },
];
const WEATHER_CALL: UpstreamItem[] = [
  { kind: 'reasoning', summaries: ['**Tool**\n\nAsk the weather service.'] },
  {
    kind: 'function_call',
    name: 'get_weather',
    callId: 'call_up_9',
    pieces: ['{"city":', '"Paris"}'],
  },
];
const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

const rejection = (p: Promise<unknown>) => rejectionOf<InstanceType<typeof OpenAI.APIError>>(p);

async function waitForLog(gw: TestGateway, match: (l: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 50; i++) {
    const found = gw.logs.find(match);
    if (found) {
      return found;
    }
    await sleep(20);
  }
  return undefined;
}

function post(gw: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return httpPost(gw.origin, '/v1/responses', body, headers);
}

/** A gateway in front of a fresh fake upstream for the enclosing describe block. */
function useGateway(catalog: (upstreamUrl: string) => string, env: Record<string, string> = {}) {
  const t = {} as { upstream: FakeUpstream; gw: TestGateway; client: OpenAI };
  beforeAll(async () => {
    t.upstream = await new FakeUpstream().start();
    t.gw = await startGateway({ CATALOG_PATH: catalog(t.upstream.url), ...env });
    t.client = new OpenAI({ baseURL: t.gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.gw.close();
    await t.upstream.stop();
  });
  beforeEach(() => t.upstream.reset());
  return t;
}

/** Two providers serving the Responses API, and a chat-only model on the compatible one. */
function severalProviders(url: string): string {
  return writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: ${url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-vllm, kind: openai-compatible, base_url: ${url}/vllm/v1 }
models:
  - { id: test-gpt, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, context_window: 8192, max_output_tokens: 1024, pricing: { input: 1, output: 1 } }
  - { id: vllm-responses, provider: fake-vllm, family: openai, upstream_api: responses, context_window: 8192, max_output_tokens: 1024, pricing: { input: 0, output: 0 } }
  - { id: vllm-chat, provider: fake-vllm, family: openai, context_window: 8192, max_output_tokens: 1024, pricing: { input: 0, output: 0 } }
`);
}

describe('POST /v1/responses against an OpenAI upstream', () => {
  const t = useGateway(testCatalog, { SSE_KEEPALIVE_MS: '100' });

  it('returns output_text, the reasoning item and usage of a non-streamed response', async () => {
    t.upstream.on('/v1/responses', () => ({
      json: responsesObject('upstream-gpt-1-2025', REASONED_ANSWER),
    }));
    const response = await t.client.responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'Say hello in French',
      reasoning: { effort: 'medium', summary: 'detailed' },
    });
    expect(response.output_text).toBe('Bonjour!');
    expect(response.model).toBe('test-gpt');
    expect(response.output[0]).toEqual({
      id: 'rs_up_0',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: '**Greeting**\n\nThe user wants French.' }],
    });
    expect(response.usage).toEqual(RESPONSES_USAGE);
    const sent = t.upstream.last();
    expect(sent.method).toBe('POST');
    expect(sent.body.model).toBe('upstream-gpt-1');
    expect(sent.body.input).toBe('Say hello in French');
    expect(sent.body.instructions).toBe(INSTRUCTIONS);
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    const log = await waitForLog(
      t.gw,
      (l) => l.msg === 'request' && l.path === '/v1/responses' && l.stream === false,
    );
    expect(log?.usage).toEqual({
      inputTokens: 84,
      outputTokens: 94,
      cachedInputTokens: 16,
      reasoningTokens: 64,
    });
  });

  it('forwards every field it does not handle, reasoning items included, untouched (rule S2)', async () => {
    t.upstream.on('/v1/responses', () => ({
      json: responsesObject('upstream-gpt-1', REASONED_ANSWER),
    }));
    // A continuation must name a response this key made through the gateway.
    const previous = await t.client.responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'hi',
    });
    const reasoning = {
      type: 'reasoning' as const,
      id: 'rs_prev',
      summary: [{ type: 'summary_text' as const, text: 'Earlier thought' }],
      encrypted_content: 'gAAAA-opaque-payload',
    };
    await t.client.responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: [{ role: 'user', content: 'hi' }, reasoning, { role: 'user', content: 'again' }],
      include: ['reasoning.encrypted_content'],
      store: false,
      previous_response_id: previous.id,
      metadata: { team: 'a' },
      text: {
        format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      },
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', name: 'get_weather' },
      prompt_cache_key: 'k1',
      ...({ vendor_extension: { nested: [1, 2] } } as object),
    });
    const body = t.upstream.last().body;
    expect(body.input[1]).toEqual(reasoning);
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(body.store).toBe(false);
    expect(body.previous_response_id).toBe(previous.id);
    expect(body.metadata).toEqual({ team: 'a' });
    expect(body.text.format.name).toBe('out');
    expect(body.tools).toEqual([WEATHER_TOOL]);
    expect(body.tool_choice).toEqual({ type: 'function', name: 'get_weather' });
    expect(body.prompt_cache_key).toBe('k1');
    expect(body.vendor_extension).toEqual({ nested: [1, 2] });
  });

  it('streams every event in order, with exact sequence numbers and indices', async () => {
    const events = responsesStream('upstream-gpt-1-2025', REASONED_ANSWER);
    t.upstream.on('/v1/responses', () => ({ sse: asSse(events) }));
    const stream = await t.client.responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'Say hello in French',
      reasoning: { effort: 'medium', summary: 'detailed' },
      stream: true,
    });
    const received: any[] = await collect(stream);
    expect(t.upstream.last().body.stream).toBe(true);
    const rewrite = (e: any) =>
      'response' in e ? { ...e, response: { ...e.response, model: 'test-gpt' } } : e;
    expect(received).toEqual(events.map(rewrite));
    expect(received.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(received.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(() => checkResponseStream(received)).not.toThrow();
  });

  it('names every SSE event after its type and sends no [DONE]', async () => {
    t.upstream.on('/v1/responses', () => ({
      sse: [...asSse(responsesStream('upstream-gpt-1', REASONED_ANSWER)), '[DONE]'],
    }));
    const res = await post(t.gw, {
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'x',
      stream: true,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const frames = parseSse(text);
    expect(frames.length).toBe(21);
    for (const frame of frames) {
      expect(frame.event).toBe(frame.data.type);
    }
    expect(text).not.toContain('[DONE]');
    expect(text).not.toContain('upstream-gpt-1');
  });

  const multiSummary = recordedLines('openai-responses/reasoning-multi-summary.stream.jsonl');
  (multiSummary ? it : it.skip)(
    'relays the recorded multi-part summary stream intact, and stream() assembles it',
    async () => {
      const events = multiSummary as any[];
      t.upstream.on('/v1/responses', () => ({ sse: asSse(events) }));
      const request = {
        model: 'test-gpt',
        instructions: INSTRUCTIONS,
        input: 'Think hard',
        reasoning: { effort: 'high' as const, summary: 'detailed' as const },
      };
      const raw = await t.client.responses.create({ ...request, stream: true });
      const received: any[] = await collect(raw);
      expect(received).toHaveLength(events.length);
      received.forEach((event, i) => {
        const expected =
          'response' in events[i]
            ? { ...events[i], response: { ...events[i].response, model: 'test-gpt' } }
            : events[i];
        expect(event).toEqual(expected);
      });
      expect(() => checkResponseStream(received)).not.toThrow();

      const final = await t.client.responses.stream(request).finalResponse();
      const summary = (final.output[0] as OpenAI.Responses.ResponseReasoningItem).summary;
      expect(summary.map((s) => s.text.split('\n')[0])).toEqual([
        '**Anonymized summary 0**',
        '**Anonymized summary 1**',
        '**Anonymized summary 2**',
      ]);
      expect(final.output_text).toBe('Anonymized assistant response text.');
      expect(final.model).toBe('test-gpt');
      const log = await waitForLog(
        t.gw,
        (l) => l.msg === 'request' && l.stream === true && (l.usage as any)?.inputTokens === 12044,
      );
      expect(log?.usage).toEqual({
        inputTokens: 12044,
        outputTokens: 1627,
        cachedInputTokens: 0,
        reasoningTokens: 516,
      });
    },
  );

  const errorStream = recordedLines('openai-responses/error.stream.jsonl');
  (errorStream ? it : it.skip)(
    'relays the recorded mid-stream error, which the SDK raises as an APIError',
    async () => {
      const events = errorStream as any[];
      t.upstream.on('/v1/responses', () => ({ sse: asSse(events) }));
      const body = { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'x' };
      const stream = await t.client.responses.create({ ...body, stream: true });
      const seen: string[] = [];
      const consume = async (): Promise<void> => {
        for await (const event of stream) {
          seen.push(event.type);
        }
      };
      const error = await rejection(consume());
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.code).toBe('insufficient_quota');
      expect(error.message).toContain('You exceeded your current quota');
      expect(seen).toEqual(['response.created', 'response.in_progress']);

      const frames = parseSse(await (await post(t.gw, { ...body, stream: true })).text());
      expect(frames.map((f) => [f.event, f.data.sequence_number])).toEqual([
        ['response.created', 0],
        ['response.in_progress', 1],
        ['error', 2],
        ['response.failed', 3],
      ]);
      expect(frames[3].data.response).toMatchObject({
        status: 'failed',
        model: 'test-gpt',
        error: { code: 'insufficient_quota' },
      });
    },
  );

  it('gives responses.stream() the reasoning summary and the answer', async () => {
    t.upstream.on('/v1/responses', () => ({
      sse: asSse(responsesStream('upstream-gpt-1', REASONED_ANSWER)),
    }));
    const stream = t.client.responses.stream({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'Say hello in French',
      reasoning: { effort: 'medium', summary: 'detailed' },
    });
    const summaryDeltas: string[] = [];
    const textDeltas: string[] = [];
    stream.on('response.reasoning_summary_text.delta', (e) => summaryDeltas.push(e.delta));
    stream.on('response.output_text.delta', (e) => textDeltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(summaryDeltas.join('')).toBe('**Greeting**\n\nThe user wants French.');
    expect(textDeltas).toEqual(['Bon', 'jour', '!']);
    expect(final.output_text).toBe('Bonjour!');
    expect((final.output[0] as OpenAI.Responses.ResponseReasoningItem).summary[0].text).toBe(
      '**Greeting**\n\nThe user wants French.',
    );
    expect(final.status).toBe('completed');
  });

  it('carries a function call out and its output back in', async () => {
    t.upstream.on('/v1/responses', () => ({
      json: responsesObject('upstream-gpt-1', WEATHER_CALL),
    }));
    const first = await t.client.responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'Weather in Paris?',
      tools: [WEATHER_TOOL],
    });
    const call = first.output.find((i) => i.type === 'function_call')!;
    expect(call).toMatchObject({
      type: 'function_call',
      call_id: 'call_up_9',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });

    t.upstream.on('/v1/responses', () => ({
      sse: asSse(responsesStream('upstream-gpt-1', [{ kind: 'message', pieces: ['It is 18°C.'] }])),
    }));
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'Weather in Paris?' },
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: 'call_up_9', output: '{"temp_c":18}' },
    ];
    const final = await t.client.responses
      .stream({ model: 'test-gpt', instructions: INSTRUCTIONS, input, tools: [WEATHER_TOOL] })
      .finalResponse();
    expect(final.output_text).toBe('It is 18°C.');
    const sent = t.upstream.last().body.input;
    expect(sent[1]).toEqual(first.output[0]);
    expect(sent[2]).toEqual(first.output[1]);
    expect(sent[3]).toEqual({
      type: 'function_call_output',
      call_id: 'call_up_9',
      output: '{"temp_c":18}',
    });
  });

  it('ends a stream cut by the upstream with an error event and response.failed', async () => {
    const events = responsesStream('upstream-gpt-1', REASONED_ANSWER).slice(0, 15);
    t.upstream.on('/v1/responses', () => ({ sse: asSse(events), after: 'destroy' }));
    const body = { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'x', stream: true };

    const frames = parseSse(await (await post(t.gw, body)).text());
    expect(frames.slice(0, 15).map((f) => f.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(frames.slice(15)).toEqual([
      {
        event: 'error',
        data: expect.objectContaining({
          type: 'error',
          sequence_number: 15,
          code: 'upstream_unavailable',
          error: expect.objectContaining({ type: 'server_error', code: 'upstream_unavailable' }),
        }),
      },
      {
        event: 'response.failed',
        data: expect.objectContaining({
          sequence_number: 16,
          response: expect.objectContaining({
            id: 'resp_up_1',
            status: 'failed',
            model: 'test-gpt',
          }),
        }),
      },
    ]);
    expect(() => checkResponseStream(frames.map((f) => f.data))).not.toThrow();

    const stream = t.client.responses.stream({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'x',
    });
    const error = await rejection(stream.finalResponse());
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.message).toMatch(/could not be reached/);
  });

  it('ends a stream that stopped without a terminal event with response.failed', async () => {
    t.upstream.on('/v1/responses', () => ({
      sse: asSse(responsesStream('upstream-gpt-1', REASONED_ANSWER, 'none')),
    }));
    const res = await post(t.gw, {
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'x',
      stream: true,
    });
    const frames = parseSse(await res.text());
    expect(frames.slice(-2).map((f) => f.event)).toEqual(['error', 'response.failed']);
    expect(frames[frames.length - 2].data.message).toMatch(/ended before the response completed/);
    expect(() => checkResponseStream(frames.map((f) => f.data))).not.toThrow();
  });

  it('sends SSE keep-alive comments while the upstream is silent', async () => {
    const events = responsesStream('upstream-gpt-1', []);
    t.upstream.on('/v1/responses', () => ({ sse: asSse(events), intervalMs: 250 }));
    const res = await post(t.gw, {
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'x',
      stream: true,
    });
    const text = await res.text();
    expect(text).toContain(': keepalive\n\n');
    expect(parseSse(text).map((f) => f.event)).toEqual(events.map((e) => e.type));
  });

  it('relays the first events at once and aborts the upstream when the client aborts', async () => {
    const events = responsesStream('upstream-gpt-1', [{ kind: 'message', pieces: ['one', 'two'] }]);
    t.upstream.on('/v1/responses', () => ({ sse: asSse(events.slice(0, 6)), after: 'hold' }));
    const controller = new AbortController();
    const stream = await t.client.responses.create(
      { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'x', stream: true },
      { signal: controller.signal },
    );
    const seen: string[] = [];
    const consume = async (): Promise<void> => {
      for await (const event of stream) {
        seen.push(event.type);
        if (event.type === 'response.output_text.delta') {
          controller.abort();
        }
      }
    };
    await consume().catch(() => undefined);
    expect(seen[seen.length - 1]).toBe('response.output_text.delta');
    // Resolves as soon as the upstream sees the abort; the bound only has to outlast a
    // loaded machine.
    await expect(
      Promise.race([t.upstream.last().ended, sleep(10_000).then(() => 'still open')]),
    ).resolves.toBe('aborted');
  });
});

// Ids the fake upstream holds but no key made through the gateway: only an admin key
// reaches them, and the gateway must find their provider (see test/responses-owners).
describe('GET and DELETE /v1/responses/{id}', () => {
  const t = useGateway(testCatalog, { GATEWAY_KEYS_FILE: adminKeysFile() });

  const get = (path: string) =>
    fetch(`${t.gw.baseURL}/responses/${path}`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });

  it('retrieves a stored response from the one provider that serves the Responses API', async () => {
    t.upstream.on('/v1/responses/resp_up_1', () => ({
      json: responsesObject('upstream-gpt-1', REASONED_ANSWER),
    }));
    const response = await t.client.responses.retrieve('resp_up_1', {
      include: ['reasoning.encrypted_content'],
    });
    expect(response.output_text).toBe('Bonjour!');
    const sent = t.upstream.last();
    expect(sent.method).toBe('GET');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(decodeURIComponent(sent.url)).toContain('include[]=reasoning.encrypted_content');
  });

  it('deletes a stored response upstream', async () => {
    t.upstream.on('/v1/responses/resp_up_1', () => ({
      json: { id: 'resp_up_1', object: 'response', deleted: true },
    }));
    await t.client.responses.delete('resp_up_1');
    expect(t.upstream.last().method).toBe('DELETE');
  });

  it('picks the provider from ?model= and does not forward that parameter', async () => {
    t.upstream.on('/v1/responses/resp_up_1', () => ({
      json: responsesObject('upstream-gpt-1', REASONED_ANSWER),
    }));
    const res = await get('resp_up_1?model=test-gpt&starting_after=3');
    expect(res.status).toBe(200);
    expect(t.upstream.last().url).toBe('/v1/responses/resp_up_1?starting_after=3');
  });

  it('replays a stored response as a stream when asked to', async () => {
    const events = responsesStream('upstream-gpt-1', REASONED_ANSWER);
    t.upstream.on('/v1/responses/resp_up_1', () => ({ sse: asSse(events) }));
    const stream = await t.client.responses.retrieve('resp_up_1', { stream: true });
    const received: any[] = await collect(stream);
    expect(received).toEqual(events);
  });

  it('keeps the upstream 404 of an unknown response id', async () => {
    t.upstream.on('/v1/responses/resp_nope', () => ({
      status: 404,
      json: {
        error: {
          message: "Response with id 'resp_nope' not found.",
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    }));
    const e = await rejection(t.client.responses.retrieve('resp_nope'));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e.message).toContain('resp_nope');
  });

  it('answers 404 in the OpenAI envelope for local models and malformed ids, without any upstream call', async () => {
    for (const path of ['resp_1?model=local-echo-gpt', 'resp%2F..%2Fadmin', 'resp_1?model=nope']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        error: expect.objectContaining({
          type: 'invalid_request_error',
          message: expect.any(String),
        }),
      });
    }
    expect(t.upstream.requests).toHaveLength(0);
  });

  it('rejects ?model= naming a model the endpoint does not accept (R1)', async () => {
    const res = await get('resp_1?model=local-echo-claude');
    expect(res.status).toBe(400);
  });

  it('needs a key', async () => {
    const res = await fetch(`${t.gw.baseURL}/responses/resp_1`);
    expect(res.status).toBe(401);
    const del = await fetch(`${t.gw.baseURL}/responses/resp_1`, { method: 'DELETE' });
    expect(del.status).toBe(401);
    expect(t.upstream.requests).toHaveLength(0);
  });
});

describe('responses routing with several providers', () => {
  const t = useGateway(severalProviders, { GATEWAY_KEYS_FILE: adminKeysFile() });

  it("sends the client's own bytes to a Responses upstream when the model id is unchanged", async () => {
    t.upstream.on('/vllm/v1/responses', () => ({
      json: responsesObject('vllm-responses', REASONED_ANSWER),
    }));
    const raw = '{"model":"vllm-responses",  "instructions":"s", "input":"x"}';
    const res = await post(t.gw, raw);
    expect(res.status).toBe(200);
    expect(t.upstream.last().raw).toBe(raw);
    expect(t.upstream.last().headers.authorization).toBeUndefined();
  });

  it('translates to chat completions for a model an OpenAI-compatible server serves through chat only', async () => {
    t.upstream.on('/vllm/v1/chat/completions', () => ({
      json: chatCompletion('up-chat', 'Hi there'),
    }));
    const response = await t.client.responses.create({
      model: 'vllm-chat',
      instructions: INSTRUCTIONS,
      input: 'x',
    });
    expect(response.output_text).toBe('Hi there');
    expect(t.upstream.last().body).toMatchObject({
      model: 'vllm-chat',
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: 'x' },
      ],
    });
  });

  it('asks for ?model= when several providers may hold a response, then uses its provider', async () => {
    const ambiguous = await fetch(`${t.gw.baseURL}/responses/resp_1`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    expect(ambiguous.status).toBe(400);
    const body = (await ambiguous.json()) as { error: { param: string; message: string } };
    expect(body.error.param).toBe('model');
    expect(body.error.message).toContain('?model=');

    t.upstream.on('/vllm/v1/responses/resp_1', () => ({
      json: { id: 'resp_1', object: 'response', deleted: true },
    }));
    await t.client.responses.delete('resp_1', { query: { model: 'vllm-responses' } });
    expect(t.upstream.last()).toMatchObject({ method: 'DELETE', url: '/vllm/v1/responses/resp_1' });
  });
});

describe('responses errors surface as the SDK error classes', () => {
  const t = useGateway(testCatalog);

  const ok = { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'hi' };
  const create = (body: Record<string, unknown>, c: OpenAI = t.client): Promise<unknown> =>
    c.responses.create(body as never);

  it.each(['local-echo-claude', 'test-vllm'])(
    'rejects %s, a model outside the openai family, naming the endpoints to use (R1)',
    async (model) => {
      const e = await rejection(create({ ...ok, model }));
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e.type).toBe('invalid_request_error');
      expect(e.param).toBe('model');
      expect(e.message).toContain(`'${model}'`);
      expect(e.message).toContain('/v1/chat/completions');
      expect(e.message).toContain('/v1/messages');
      expect(t.upstream.requests).toHaveLength(0);
    },
  );

  it('rejects a request without instructions before any upstream call (S1)', async () => {
    const e = await rejection(create({ model: 'test-gpt', input: 'hi' }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe('instructions');
    expect(e.code).toBe('missing_system_prompt');
    const blank = await rejection(create({ ...ok, instructions: '  ' }));
    expect(blank.status).toBe(400);
    expect(t.upstream.requests).toHaveLength(0);
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    const e = await rejection(create({ ...ok, model: 'gpt-does-not-exist' }));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e.code).toBe('model_not_found');
  });

  it('answers 401 without a key and with a wrong key', async () => {
    const wrong = new OpenAI({ baseURL: t.gw.baseURL, apiKey: 'nope', maxRetries: 0 });
    expect(await rejection(create(ok, wrong))).toBeInstanceOf(OpenAI.AuthenticationError);
    const res = await fetch(`${t.gw.baseURL}/responses`, {
      method: 'POST',
      body: JSON.stringify(ok),
    });
    expect(res.status).toBe(401);
    expect(t.upstream.requests).toHaveLength(0);
  });

  it('answers 400 for a model the endpoint does not accept, naming the one that does', async () => {
    const e = await rejection(create({ ...ok, model: 'messages-only' }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.message).toContain('/v1/messages');
  });

  it.each([
    ['input', { model: 'test-gpt', instructions: INSTRUCTIONS }],
    ['input', { ...ok, input: 42 }],
    ['input[0].role', { ...ok, input: [{ role: 'tool', content: 'x' }] }],
    ['input[0].call_id', { ...ok, input: [{ type: 'function_call_output', output: 'x' }] }],
    ['reasoning.effort', { ...ok, reasoning: { effort: 'extreme' } }],
    ['max_output_tokens', { ...ok, max_output_tokens: -1 }],
    ['tools[0].name', { ...ok, tools: [{ type: 'function', parameters: {} }] }],
    ['stream', { ...ok, stream: 'yes' }],
  ])('answers 400 naming %s when it is missing or malformed', async (param, body) => {
    const e = await rejection(create(body));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe(param);
    expect(t.upstream.requests).toHaveLength(0);
  });

  it('answers 400 in the OpenAI envelope for malformed JSON and a body that is not an object', async () => {
    for (const body of ['{"model":', '[1,2]']) {
      const res = await post(t.gw, body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { type: string } };
      expect(json.error.type).toBe('invalid_request_error');
    }
  });

  it('keeps an upstream 429 as a RateLimitError with its retry-after', async () => {
    t.upstream.on('/v1/responses', () => ({
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
    expect(e.message).toContain('Rate limit reached');
    const streamed = await rejection(create({ ...ok, stream: true }));
    expect(streamed).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('turns an upstream 500 into a 502 InternalServerError', async () => {
    t.upstream.on('/v1/responses', () => ({ status: 500, json: { error: { message: 'boom' } } }));
    const e = await rejection(create(ok));
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(502);
    expect(e.message).toContain('boom');
  });

  it('keeps an upstream 400 with its message, code and param', async () => {
    t.upstream.on('/v1/responses', () => ({
      status: 400,
      json: {
        error: {
          message: "Unsupported parameter: 'temperature'",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'unsupported_parameter',
        },
      },
    }));
    const e = await rejection(create({ ...ok, temperature: 0.5 }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe('temperature');
    expect(e.code).toBe('unsupported_parameter');
  });

  it('answers 503 without retry for a model whose provider has no key', async () => {
    const e = await rejection(create({ ...ok, model: 'no-key-model' }));
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(503);
    expect(e.headers?.get('x-should-retry')).toBe('false');
  });
});

describe('responses fast path against an upstream that answers wrongly', () => {
  const t = useGateway(testCatalog);
  const ok = { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'hi' };

  it.each([
    ['null', { json: null }],
    ['an array', { json: [1, 2] }],
    ['not JSON', { text: '<html>Bad Gateway</html>', status: 200 }],
  ])(
    'answers 502 upstream_error naming the provider for a 2xx body that is %s',
    async (_, reply) => {
      t.upstream.on('/v1/responses', () => reply);
      const res = await post(t.gw, ok);
      expect(res.status).toBe(502);
      const { error } = (await res.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
      expect(error.message).toContain("'fake-openai'");
    },
  );

  it('answers a streamed request that got an HTML page with a 502 before any header', async () => {
    t.upstream.on('/v1/responses', () => ({
      text: '<html>maintenance</html>',
      status: 200,
      headers: { 'content-type': 'text/html' },
    }));
    const res = await post(t.gw, { ...ok, stream: true });
    expect(res.status).toBe(502);
    const { error } = (await res.json()) as { error: Record<string, string> };
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('text/html');
  });
});
