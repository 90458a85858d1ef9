import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  UPSTREAM_MODEL,
  anthropicMessage,
  named,
  thinkingToolEvents,
} from './support/anthropic-fixtures';
import { chatCompletion, textStream, toolCallStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import {
  asSse,
  checkResponseStream,
  collect,
  responsesObject,
  responsesStream,
} from './support/responses-fixtures';
import { type TestGateway, startGateway, writeCatalog } from './support/gateway';
import { REDIS_URL, deleteKeys, describeWithRedis, uniquePrefix } from './support/redis';

const KEY_A = 'cache-key-a-0123456789abcdef';
const KEY_B = 'cache-key-b-0123456789abcdef';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const SYSTEM = { role: 'system' as const, content: 'You are a terse assistant.' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function cacheCatalog(upstreamUrl: string): string {
  return writeCatalog(`
providers:
  - name: fake-openai
    kind: openai
    base_url: ${upstreamUrl}/v1
    api_key_env: TEST_UPSTREAM_KEY
  - name: fake-anthropic
    kind: anthropic
    base_url: ${upstreamUrl}
    api_key_env: TEST_UPSTREAM_KEY
  - name: local
    kind: local
models:
  - { id: cached-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, cache: { ttl_s: 60 } }
  - { id: cached-gpt, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, cache: { ttl_s: 60 } }
  - { id: brief-gpt, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, cache: { ttl_s: 1 } }
  - { id: plain-gpt, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
  - { id: cached-resp, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, upstream_api: responses, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { reasoning: true, tools: true }, cache: { ttl_s: 60 } }
  - { id: cached-claude, upstream_id: ${UPSTREAM_MODEL}, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true }, cache: { ttl_s: 60 } }
`);
}

/** A question nobody asked before in this run: each test starts on an empty entry. */
let asked = 0;
const fresh = (what: string): string => `${what} #${++asked} ${Date.now()}`;

describe('Response cache (in memory)', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let other: OpenAI;
  let anthropic: Anthropic;
  let calls: number;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway({
      CATALOG_PATH: cacheCatalog(upstream.url),
      GATEWAY_API_KEYS: `${KEY_A},${KEY_B}`,
      REDIS_URL: '',
      METRICS_TOKEN,
    });
    openai = new OpenAI({ baseURL: gw.baseURL, apiKey: KEY_A, maxRetries: 0 });
    other = new OpenAI({ baseURL: gw.baseURL, apiKey: KEY_B, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.origin, apiKey: KEY_A, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.reset();
    calls = 0;
  });

  const answerChat = (text: string): void => {
    upstream.on('/v1/chat/completions', (req) => {
      calls++;
      return req.body.stream
        ? {
            sse: [
              ...textStream('upstream-gpt-1', [text.slice(0, 3), text.slice(3)], true),
              '[DONE]',
            ],
          }
        : { json: chatCompletion('upstream-gpt-1', text) };
    });
  };

  const ask = (client: OpenAI, content: string, model = 'cached-gpt', headers = {}) =>
    client.chat.completions
      .create(
        { model, messages: [SYSTEM, { role: 'user', content }], temperature: 0.7 },
        { headers },
      )
      .withResponse();

  it('answers a repeated chat request from the cache, marked hit, without calling the upstream', async () => {
    answerChat('Bonjour');
    const question = fresh('Say hello in French');
    const first = await ask(openai, question);
    expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(first.data.choices[0].message.content).toBe('Bonjour');
    const second = await ask(openai, question);
    expect(second.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(second.data.choices[0].message.content).toBe('Bonjour');
    expect(second.data.model).toBe('cached-gpt');
    expect(second.data.choices[0].finish_reason).toBe('stop');
    // The client sees the answer's own usage; the upstream was called once.
    expect(second.data.usage?.prompt_tokens).toBe(19);
    expect(calls).toBe(1);
  });

  it('shares one entry between bodies that differ only in key order and in `stream`', async () => {
    answerChat('Same');
    const content = fresh('order');
    const post = (body: string) =>
      fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
        body,
      });
    const a = await post(
      JSON.stringify({ model: 'cached-gpt', messages: [SYSTEM, { role: 'user', content }] }),
    );
    expect(a.headers.get('x-gateway-cache')).toBe('miss');
    await a.json();
    const b = await post(
      `{"messages":[{"content":${JSON.stringify(SYSTEM.content)},"role":"system"},{"content":${JSON.stringify(content)},"role":"user"}],"stream":false,"model":"cached-gpt"}`,
    );
    expect(b.headers.get('x-gateway-cache')).toBe('hit');
    expect(((await b.json()) as any).choices[0].message.content).toBe('Same');
    // A different body is another entry.
    const c = await post(
      JSON.stringify({
        model: 'cached-gpt',
        messages: [SYSTEM, { role: 'user', content }],
        max_tokens: 5,
      }),
    );
    expect(c.headers.get('x-gateway-cache')).toBe('miss');
    await c.text();
    expect(calls).toBe(2);
  });

  it('replays an answer first streamed as JSON, and one first answered as JSON as a valid stream', async () => {
    answerChat('Streamed!');
    const question = fresh('stream first');
    const streamed = openai.chat.completions.stream({
      model: 'cached-gpt',
      messages: [SYSTEM, { role: 'user', content: question }],
      temperature: 0.7,
    });
    expect((await streamed.finalChatCompletion()).choices[0].message.content).toBe('Streamed!');
    const json = await ask(openai, question);
    expect(json.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(json.data.choices[0].message.content).toBe('Streamed!');
    expect(calls).toBe(1);

    answerChat('Json first');
    const other = fresh('json first');
    await ask(openai, other);
    const { data: stream, response } = await openai.chat.completions
      .create({
        model: 'cached-gpt',
        messages: [SYSTEM, { role: 'user', content: other }],
        temperature: 0.7,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    let text = '';
    let usage: unknown;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Json first');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 10 });
    expect(calls).toBe(2);
  });

  it('replays streamed tool calls through the SDK stream helper', async () => {
    upstream.on('/v1/chat/completions', () => {
      calls++;
      return { sse: [...toolCallStream('upstream-gpt-1'), '[DONE]'] };
    });
    const question = fresh('weather and time');
    const run = async () => {
      const s = openai.chat.completions.stream({
        model: 'cached-gpt',
        messages: [SYSTEM, { role: 'user', content: question }],
        tools: [
          { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
          { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
        ],
      });
      return (await s.finalChatCompletion()).choices[0];
    };
    const first = await run();
    const second = await run();
    expect(second.finish_reason).toBe('tool_calls');
    expect(second.message.tool_calls).toEqual(first.message.tool_calls);
    expect(second.message.tool_calls?.map((c) => c.function.arguments)).toEqual([
      '{"city":"Paris"}',
      '{"tz":"CET"}',
    ]);
    expect(calls).toBe(1);
  });

  it('replays a Messages answer with thinking, signature and tool use, streamed and not', async () => {
    upstream.on('/v1/messages', (req) => {
      calls++;
      return req.body.stream
        ? { sse: named(thinkingToolEvents(UPSTREAM_MODEL)) }
        : { json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'unused' }]) };
    });
    const params = {
      model: 'cached-claude',
      max_tokens: 4000,
      system: 'You are a weather bot.',
      thinking: { type: 'enabled' as const, budget_tokens: 2000 },
      tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
      messages: [{ role: 'user' as const, content: fresh('Weather in Paris?') }],
    };
    const original = await anthropic.messages.stream(params).finalMessage();
    const { data: replayed, response } = await anthropic.messages.create(params).withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    expect(replayed.content).toEqual(original.content);
    expect(replayed.stop_reason).toBe('tool_use');
    const restreamed = anthropic.messages.stream(params);
    const final = await restreamed.finalMessage();
    expect(final.content).toEqual(original.content);
    expect(final.content[0]).toMatchObject({ type: 'thinking', signature: expect.any(String) });
    expect(calls).toBe(1);
  });

  it('replays a Messages answer first answered as JSON as a stream the SDK helper accepts', async () => {
    upstream.on('/v1/messages', () => {
      calls++;
      return { json: anthropicMessage(UPSTREAM_MODEL, [{ type: 'text', text: 'Hi there' }]) };
    });
    const params = {
      model: 'cached-claude',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: fresh('Hi') }],
    };
    await anthropic.messages.create(params);
    const text: string[] = [];
    const stream = anthropic.messages.stream(params).on('text', (t) => text.push(t));
    const final = await stream.finalMessage();
    expect(text.join('')).toBe('Hi there');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.input_tokens).toBe(25);
    expect(calls).toBe(1);
  });

  it('caches Responses answers with store: false only, replayed as JSON and as a valid event stream', async () => {
    const items = [
      { kind: 'reasoning' as const, summaries: ['Thinking it over.'] },
      { kind: 'message' as const, pieces: ['Forty', '-two'] },
    ];
    upstream.on('/v1/responses', (req) => {
      calls++;
      return req.body.stream
        ? { sse: asSse(responsesStream('upstream-gpt-1', items)) }
        : { json: responsesObject('upstream-gpt-1', items) };
    });
    const input = fresh('The answer?');
    const first = await openai.responses
      .stream({ model: 'cached-resp', instructions: 'Be terse.', input, store: false })
      .finalResponse();
    expect(first.output_text).toBe('Forty-two');
    const { data: json, response } = await openai.responses
      .create({ model: 'cached-resp', instructions: 'Be terse.', input, store: false })
      .withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    expect(json.output_text).toBe('Forty-two');
    expect(json.status).toBe('completed');
    const events = await collect(
      await openai.responses.create({
        model: 'cached-resp',
        instructions: 'Be terse.',
        input,
        store: false,
        stream: true,
      }),
    );
    checkResponseStream(events);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed' });
    expect(calls).toBe(1);
    // A stored response belongs to the key that made it: never shared, never cached.
    const stored = fresh('Stored?');
    const once = await openai.responses
      .create({ model: 'cached-resp', instructions: 'Be terse.', input: stored })
      .withResponse();
    expect(once.response.headers.get('x-gateway-cache')).toBeNull();
    await openai.responses.create({
      model: 'cached-resp',
      instructions: 'Be terse.',
      input: stored,
    });
    expect(calls).toBe(3);
  });

  it('never caches an answer a protection blocked, and keys entries by the protections on', async () => {
    const system = 'Be brief. Never mention project Bluebird to anyone outside the team.';
    const filter = (action: string) => ({
      name: 'system_prompt_filter',
      input_schema: {
        type: 'object' as const,
        properties: { action: { type: 'string', default: action } },
      },
    });
    const question = `Say: never mention project bluebird to anyone outside the team ${fresh('')}`;
    const ask = (tools: object[]) =>
      anthropic.messages
        .create({
          model: 'cached-echo-claude',
          max_tokens: 256,
          system,
          messages: [{ role: 'user', content: question }],
          tools: tools as any,
        })
        .withResponse();
    const blocked = await ask([filter('block')]);
    expect(blocked.data.stop_reason).toBe('refusal');
    expect(blocked.response.headers.get('x-gateway-protections')).toMatch(/=blocked/);
    expect(blocked.response.headers.get('x-gateway-cache')).toBe('miss');
    // The same request once more: the refusal was not stored.
    expect((await ask([filter('block')])).response.headers.get('x-gateway-cache')).toBe('miss');
    // Redacted answers complete: stored, and replayed only under the same protection settings.
    const redacted = await ask([filter('redact')]);
    expect(redacted.response.headers.get('x-gateway-cache')).toBe('miss');
    const replay = await ask([filter('redact')]);
    expect(replay.response.headers.get('x-gateway-cache')).toBe('hit');
    // The replayed answer passed its protections when stored: none is left pending.
    expect(replay.response.headers.get('x-gateway-protections')).toMatch(/=pass/);
    expect(replay.data.content).toEqual(redacted.data.content);
    expect(JSON.stringify(replay.data.content)).toContain('[REDACTED]');
    expect((await ask([])).response.headers.get('x-gateway-cache')).toBe('miss');
  });

  it('keeps entries apart per key: a static key is its own team', async () => {
    answerChat('Mine');
    const question = fresh('whose');
    await ask(openai, question);
    const theirs = await ask(other, question);
    expect(theirs.response.headers.get('x-gateway-cache')).toBe('miss');
    expect((await ask(other, question)).response.headers.get('x-gateway-cache')).toBe('hit');
    expect(calls).toBe(2);
  });

  it('keeps answers apart by the fallbacks a request allows', async () => {
    answerChat('Primary');
    const question = fresh('fallbacks');
    await ask(openai, question);
    const withFallback = await ask(openai, question, 'cached-gpt', {
      'x-gateway-fallbacks': 'plain-gpt',
    });
    expect(withFallback.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(
      (
        await ask(openai, question, 'cached-gpt', { 'x-gateway-fallbacks': 'plain-gpt' })
      ).response.headers.get('x-gateway-cache'),
    ).toBe('hit');
    expect(calls).toBe(2);
  });

  it('skips the lookup on Cache-Control: no-cache but stores the fresh answer', async () => {
    answerChat('Old');
    const question = fresh('refresh');
    await ask(openai, question);
    answerChat('New');
    const refreshed = await ask(openai, question, 'cached-gpt', { 'cache-control': 'no-cache' });
    expect(refreshed.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(refreshed.data.choices[0].message.content).toBe('New');
    const next = await ask(openai, question);
    expect(next.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(next.data.choices[0].message.content).toBe('New');
  });

  it('neither looks up nor stores on Cache-Control: no-store, and says nothing of the cache', async () => {
    answerChat('Private');
    const question = fresh('private');
    const first = await ask(openai, question, 'cached-gpt', { 'cache-control': 'no-store' });
    expect(first.response.headers.get('x-gateway-cache')).toBeNull();
    expect((await ask(openai, question)).response.headers.get('x-gateway-cache')).toBe('miss');
    expect(
      (
        await ask(openai, question, 'cached-gpt', { 'cache-control': 'max-age=0, No-Store' })
      ).response.headers.get('x-gateway-cache'),
    ).toBeNull();
    expect(calls).toBe(3);
  });

  it('sends no cache header for a model that does not opt in, and caches nothing for it', async () => {
    answerChat('Plain');
    const question = fresh('plain');
    const first = await ask(openai, question, 'plain-gpt');
    const second = await ask(openai, question, 'plain-gpt');
    expect(first.response.headers.get('x-gateway-cache')).toBeNull();
    expect(second.response.headers.get('x-gateway-cache')).toBeNull();
    expect(calls).toBe(2);
  });

  it('does not cache requests whose answer it cannot replay whole (n > 1)', async () => {
    upstream.on('/v1/chat/completions', () => {
      calls++;
      return { json: chatCompletion('upstream-gpt-1', 'one') };
    });
    const question = fresh('two answers');
    const twice = () =>
      openai.chat.completions
        .create({
          model: 'cached-gpt',
          n: 2,
          messages: [SYSTEM, { role: 'user', content: question }],
        })
        .withResponse();
    expect((await twice()).response.headers.get('x-gateway-cache')).toBeNull();
    await twice();
    expect(calls).toBe(2);
  });

  it('expires an entry after the model ttl', async () => {
    answerChat('Brief');
    const question = fresh('brief');
    await ask(openai, question, 'brief-gpt');
    expect((await ask(openai, question, 'brief-gpt')).response.headers.get('x-gateway-cache')).toBe(
      'hit',
    );
    await sleep(1100);
    expect((await ask(openai, question, 'brief-gpt')).response.headers.get('x-gateway-cache')).toBe(
      'miss',
    );
    expect(calls).toBe(2);
  });

  it('never caches an upstream error', async () => {
    upstream.on('/v1/chat/completions', () => {
      calls++;
      return calls === 1
        ? { status: 500, json: { error: { message: 'boom', type: 'server_error' } } }
        : { json: chatCompletion('upstream-gpt-1', 'Recovered') };
    });
    const question = fresh('error');
    await expect(ask(openai, question)).rejects.toMatchObject({ status: 502 });
    const after = await ask(openai, question);
    expect(after.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(after.data.choices[0].message.content).toBe('Recovered');
  });

  it('never caches a stream the upstream cut short', async () => {
    upstream.on('/v1/chat/completions', () => {
      calls++;
      const events = textStream('upstream-gpt-1', ['Half', ' an answer'], true);
      // No finish chunk, no [DONE]: the connection drops mid-answer.
      return { sse: events.slice(0, 2), after: 'destroy' as const };
    });
    const question = fresh('cut');
    const run = async (): Promise<string> => {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'cached-gpt',
          stream: true,
          messages: [SYSTEM, { role: 'user', content: question }],
        }),
      });
      expect(res.headers.get('x-gateway-cache')).toBe('miss');
      return res.text();
    };
    expect(await run()).toContain('"error"');
    await run();
    expect(calls).toBe(2);
  });

  it('never caches a stream the client left', async () => {
    upstream.on('/v1/chat/completions', (req) => {
      calls++;
      return req.body.stream
        ? {
            sse: [...textStream('upstream-gpt-1', ['a', 'b', 'c', 'd', 'e'], true), '[DONE]'],
            intervalMs: 60,
          }
        : { json: chatCompletion('upstream-gpt-1', 'abcde') };
    });
    const question = fresh('left');
    const controller = new AbortController();
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'cached-gpt',
        stream: true,
        messages: [SYSTEM, { role: 'user', content: question }],
        temperature: 0.7,
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await sleep(500);
    const after = await ask(openai, question);
    expect(after.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(calls).toBe(2);
  });

  it('counts hits and misses in the metrics', async () => {
    answerChat('Counted');
    const question = fresh('metrics');
    await ask(openai, question);
    await ask(openai, question);
    const scraped = await (
      await fetch(`${gw.origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(scraped).toMatch(
      /gateway_response_cache_lookups_total\{format="chat_completions",model="cached-gpt",result="hit"\} [1-9]/,
    );
    expect(scraped).toMatch(
      /gateway_response_cache_lookups_total\{format="chat_completions",model="cached-gpt",result="miss"\} [1-9]/,
    );
    expect(scraped).toMatch(/gateway_response_cache_memory_entries [1-9]/);
  });
});

describe('Response cache and token rate limits', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'Hi') }));
    gw = await startGateway({
      CATALOG_PATH: cacheCatalog(upstream.url),
      GATEWAY_API_KEYS: KEY_A,
      REDIS_URL: '',
      RATE_LIMIT_TOKENS_PER_MINUTE: '5000',
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('gives a hit its token reservation back: hits use no upstream tokens', async () => {
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: KEY_A, maxRetries: 0 });
    const body = {
      model: 'cached-gpt',
      max_tokens: 2000,
      messages: [SYSTEM, { role: 'user' as const, content: fresh('tokens') }],
    };
    const remaining = async (): Promise<number> => {
      const { response } = await client.chat.completions.create(body).withResponse();
      expect(response.headers.get('x-gateway-cache')).not.toBeNull();
      return Number(response.headers.get('x-ratelimit-remaining-tokens'));
    };
    await remaining();
    // Each request reserves over 2000 tokens of 5000: three kept reservations would be refused.
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push(await remaining());
    }
    // A hit charged even its replayed usage (29 tokens) would lower the count each time.
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
    }
  });
});

describeWithRedis('Response cache (Redis, shared by replicas)', () => {
  const prefix = uniquePrefix('rc');
  let upstream: FakeUpstream;
  let one: TestGateway;
  let two: TestGateway;
  let calls = 0;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    upstream.on('/v1/chat/completions', (req) => {
      calls++;
      return req.body.stream
        ? { sse: [...textStream('upstream-gpt-1', ['Sha', 'red'], true), '[DONE]'] }
        : { json: chatCompletion('upstream-gpt-1', 'Shared') };
    });
    const env = {
      CATALOG_PATH: cacheCatalog(upstream.url),
      GATEWAY_API_KEYS: KEY_A,
      REDIS_URL,
      RESPONSE_CACHE_KEY_PREFIX: prefix,
    };
    one = await startGateway(env);
    two = await startGateway(env);
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await upstream.stop();
    await deleteKeys(prefix);
  });

  it('answers on one replica what another stored, with the model ttl on the entry', async () => {
    const question = fresh('replicas');
    const body = {
      model: 'cached-gpt',
      messages: [SYSTEM, { role: 'user' as const, content: question }],
    };
    const first = await new OpenAI({
      baseURL: one.baseURL,
      apiKey: KEY_A,
      maxRetries: 0,
    }).chat.completions
      .create(body)
      .withResponse();
    expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
    // The store is written after the response closed: give it a moment.
    await sleep(100);
    const client = new OpenAI({ baseURL: two.baseURL, apiKey: KEY_A, maxRetries: 0 });
    const stream = client.chat.completions.stream(body);
    expect((await stream.finalChatCompletion()).choices[0].message.content).toBe('Shared');
    expect(calls).toBe(1);
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}*`);
      expect(keys).toHaveLength(1);
      const ttl = await redis.pttl(keys[0]);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      // What is stored is the canonical answer, never the client's key.
      const stored = (await redis.get(keys[0])) ?? '';
      expect(stored).toContain('Shared');
      expect(stored).not.toContain(KEY_A);
    } finally {
      redis.disconnect();
    }
  });

  it('expires entries in Redis after the model ttl', async () => {
    const question = fresh('redis ttl');
    const client = new OpenAI({ baseURL: one.baseURL, apiKey: KEY_A, maxRetries: 0 });
    const body = {
      model: 'brief-gpt',
      messages: [SYSTEM, { role: 'user' as const, content: question }],
    };
    const before = calls;
    await client.chat.completions.create(body);
    await sleep(100);
    const hit = await client.chat.completions.create(body).withResponse();
    expect(hit.response.headers.get('x-gateway-cache')).toBe('hit');
    await sleep(1100);
    const miss = await client.chat.completions.create(body).withResponse();
    expect(miss.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(calls - before).toBe(2);
  });
});
