import fc from 'fast-check';
import { FakeUpstream } from './support/fake-upstream';
import { damage, edit, mutate, serialise, type Damage, type Edit } from './support/fuzz';
import { startGateway, TEST_KEY, writeCatalog, type TestGateway } from './support/gateway';
import { REPLIES, type UpstreamKind } from './support/translation-fixtures';

/**
 * Property-based fuzzing of the three generation endpoints: random mutations of valid
 * requests (wrong types, nulls, extremes, deep nesting, giant strings, control characters,
 * prototype keys, duplicate keys, invalid UTF-8) must never give a 5xx, must always answer
 * in the endpoint's own envelope, and must never hang. FUZZ_RUNS sets the cases per
 * endpoint (`npm run fuzz` runs many more than the default test run).
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 120);
const CASE_TIMEOUT_MS = 10_000;
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

jest.setTimeout(Math.max(60_000, RUNS * 3 * 250));

type Body = Record<string, unknown>;
type Endpoint = '/v1/chat/completions' | '/v1/responses' | '/v1/messages';

const SYSTEM = 'You are a terse assistant. Answer in one word.';
const TOOL_SCHEMA = { type: 'object', properties: { city: { type: 'string' } } };
/** Structured output, so that mutations reach the schema walkers too ($ref to the root). */
const ANSWER_SCHEMA = {
  type: 'object',
  properties: { summary: { type: 'string' }, more: { $ref: '#' } },
  required: ['summary'],
};

const BASES: Record<Endpoint, (model: string) => Body> = {
  '/v1/chat/completions': (model) => ({
    model,
    max_tokens: 64,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ],
    tools: [{ type: 'function', function: { name: 'weather', parameters: TOOL_SCHEMA } }],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: ANSWER_SCHEMA },
    },
    temperature: 0.5,
    stream: false,
  }),
  '/v1/responses': (model) => ({
    model,
    instructions: SYSTEM,
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ],
    tools: [{ type: 'function', name: 'weather', parameters: TOOL_SCHEMA }],
    text: { format: { type: 'json_schema', name: 'answer', schema: ANSWER_SCHEMA } },
    max_output_tokens: 64,
    stream: false,
  }),
  '/v1/messages': (model) => ({
    model,
    max_tokens: 64,
    system: SYSTEM,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }],
      },
    ],
    tools: [{ name: 'weather', input_schema: TOOL_SCHEMA }],
    output_config: { format: { type: 'json_schema', schema: ANSWER_SCHEMA } },
    stream: false,
  }),
};

/** Native and translated routes: every endpoint reaches every upstream API and the local models. */
const MODELS: Record<Endpoint, string[]> = {
  '/v1/chat/completions': ['claude-f', 'gpt-resp-f', 'gpt-chat-f', 'local-echo-claude'],
  '/v1/responses': ['gpt-resp-f', 'gpt-chat-f', 'local-echo-gpt'],
  '/v1/messages': ['claude-f', 'gpt-resp-f', 'gpt-chat-f', 'local-echo-claude'],
};

interface Case {
  model: number;
  stream: boolean;
  edits: Edit[];
  damage: Damage;
}

const aCase: fc.Arbitrary<Case> = fc.record({
  model: fc.nat(),
  stream: fc.boolean(),
  edits: fc.array(edit, { minLength: 1, maxLength: 4 }),
  damage,
});

function isEnvelope(endpoint: Endpoint, body: unknown): boolean {
  const b = body as { type?: unknown; error?: { type?: unknown; message?: unknown } };
  if (typeof b?.error?.message !== 'string' || typeof b.error.type !== 'string') {
    return false;
  }
  return endpoint === '/v1/messages' ? b.type === 'error' : true;
}

describe('fuzzed requests never reach a 5xx, a foreign envelope or a hang', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  const tally = { cases: 0, byStatus: new Map<number, number>() };

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    const reply = (kind: UpstreamKind) => (req: { body: any }) =>
      REPLIES[kind]([{ type: 'text', text: 'sunny' }], req.body?.stream === true);
    upstream
      .on('/v1/messages', reply('anthropic'))
      .on('/v1/responses', reply('responses'))
      .on('/v1/chat/completions', reply('chat'));
    const catalog = writeCatalog(`
providers:
  - { name: fake-anthropic, kind: anthropic, base_url: ${upstream.url}, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-openai, kind: openai, base_url: ${upstream.url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: local, kind: local }
models:
  - { id: claude-f, upstream_id: claude-up, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: gpt-resp-f, upstream_id: gpt-resp-up, provider: fake-openai, family: openai, upstream_api: responses, context_window: 400000, max_output_tokens: 128000, pricing: { input: 1, output: 8 }, capabilities: { reasoning: true, tools: true } }
  - { id: gpt-chat-f, upstream_id: gpt-chat-up, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { tools: true } }
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
    gw = await startGateway({ CATALOG_PATH: catalog, LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    const statuses = [...tally.byStatus.entries()].sort(([a], [b]) => a - b);
    // One line for `npm run fuzz`: how many cases ran and how they were answered.
    process.stdout.write(
      `fuzz: ${tally.cases} cases, statuses ${statuses.map(([s, n]) => `${s}x${n}`).join(' ')}\n`,
    );
    await gw?.close();
    await upstream?.stop();
  });

  async function send(endpoint: Endpoint, payload: Buffer): Promise<void> {
    const res = await fetch(gw.origin + endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_KEY}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: payload,
      signal: AbortSignal.timeout(CASE_TIMEOUT_MS),
    });
    const text = await res.text();
    tally.cases++;
    tally.byStatus.set(res.status, (tally.byStatus.get(res.status) ?? 0) + 1);
    const where = `${endpoint} → ${res.status}: ${text.slice(0, 300)}`;
    if (res.status >= 500) {
      const errors = gw.logs.filter((l) => (l.level as number) >= 50).slice(-1);
      throw new Error(`5xx for ${where}\n${JSON.stringify(errors).slice(0, 3000)}`);
    }
    if (res.status >= 400) {
      if (!isEnvelope(endpoint, JSON.parse(text))) {
        throw new Error(`not the endpoint's envelope: ${where}`);
      }
      return;
    }
    if (/"type":\s*"(server_error|api_error)"/.test(text)) {
      // A 200 whose stream ended in the gateway's own failure is a 5xx in all but status.
      throw new Error(`in-stream server error for ${where}`);
    }
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      // Every data frame of a stream is JSON (or the chat terminator).
      for (const line of text.split('\n')) {
        if (line.startsWith('data: ') && line !== 'data: [DONE]') {
          JSON.parse(line.slice(6));
        }
      }
    } else {
      JSON.parse(text);
    }
  }

  it.each(Object.keys(BASES) as Endpoint[])('%s', async (endpoint) => {
    await fc.assert(
      fc.asyncProperty(aCase, async (c) => {
        const models = MODELS[endpoint];
        const base = { ...BASES[endpoint](models[c.model % models.length]), stream: c.stream };
        const body = mutate(base, c.edits);
        await send(endpoint, serialise(body, c.damage));
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
