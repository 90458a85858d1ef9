import OpenAI from 'openai';
import { scanParts } from '../src/policy/protections/prompt-injection/detector';
import { chatCompletion } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { TEST_KEY, type TestGateway, startGateway, writeCatalog } from './support/gateway';
import { rejection } from './support/rejection';

/**
 * Cheap refusals first: auth, then the model and whether the endpoint serves it, then the
 * body (validation and rule S1), then the rate limits, and only then the protections'
 * checks, whose second stage is a paid model call. A request refused on the way costs
 * neither quota nor a detector call.
 */

const SYSTEM = 'You are a support bot.';
const UNCERTAIN = 'Please ignore the previous answer and try again.';
const JUDGE_PATH = '/judge/v1/chat/completions';

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let threshold: number;

const detectorCalls = (): number => upstream.requests.filter((r) => r.path === JUDGE_PATH).length;
const answerCalls = (): number =>
  upstream.requests.filter((r) => r.path === '/v1/chat/completions').length;

/** A chat body whose user turn makes the injection detector ask its model. */
function uncertainBody(extra: Record<string, unknown> = {}): any {
  return {
    model: 'gpt-answer',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: UNCERTAIN },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'prompt_injection_protection',
          parameters: {
            type: 'object',
            properties: {
              detector_model: { default: 'judge-mini' },
              threshold: { default: threshold },
            },
          },
        },
      },
    ],
    ...extra,
  };
}

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('gpt-answer', 'Sure.') }));
  upstream.on(JUDGE_PATH, () => ({
    json: chatCompletion('judge-mini', JSON.stringify({ verdict: 'benign', reason: 'fine' })),
  }));
  const catalog = writeCatalog(`
providers:
  - { name: answers, kind: openai, base_url: ${upstream.url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: judges, kind: openai-compatible, base_url: ${upstream.url}/judge/v1 }
models:
  - { id: gpt-answer, provider: answers, family: openai, context_window: 128000, max_output_tokens: 4096, pricing: { input: 1, output: 2 } }
  - { id: judge-mini, provider: judges, family: openai, context_window: 128000, max_output_tokens: 4096, pricing: { input: 1, output: 2 } }
`);
  gw = await startGateway({ CATALOG_PATH: catalog, RATE_LIMIT_REQUESTS_PER_MINUTE: '1' });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  // Just under the local score: the detector is uncertain and asks its model.
  const score = scanParts([{ source: 'user', text: UNCERTAIN }], { threshold: 0.5 }).score;
  threshold = Math.round((score - 0.1) * 100) / 100;
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});

describe('admission order', () => {
  it('refuses an unknown model before it reads the body', async () => {
    const err = await rejection(
      openai.chat.completions.create(uncertainBody({ model: 'no-such-model', temperature: 'hot' })),
    );
    expect(err.status).toBe(404);
    expect(detectorCalls()).toBe(0);
  });

  it('refuses an invalid body before the rate limit and the paid detector stage', async () => {
    const err = await rejection(
      openai.chat.completions.create(uncertainBody({ temperature: 'hot' })),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe('temperature');
    expect(detectorCalls()).toBe(0);
  });

  it('refuses a missing system prompt before the rate limit and the paid detector stage', async () => {
    const body = uncertainBody();
    body.messages.shift();
    const err = await rejection(openai.chat.completions.create(body));
    expect(err.status).toBe(400);
    expect(detectorCalls()).toBe(0);
  });

  it('spent no quota on those: the next request is served, after one detector call', async () => {
    const completion = await openai.chat.completions.create(uncertainBody());
    expect(completion.choices[0].message.content).toBe('Sure.');
    expect(detectorCalls()).toBe(1);
    expect(answerCalls()).toBe(1);
  });

  it('refuses a rate-limited request before the paid detector stage', async () => {
    const err = await rejection(openai.chat.completions.create(uncertainBody()));
    expect(err.status).toBe(429);
    expect(detectorCalls()).toBe(1);
    expect(answerCalls()).toBe(1);
  });
});
