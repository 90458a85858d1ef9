import OpenAI from 'openai';
import { scanParts } from '../src/policy/protections/prompt-injection/detector';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { rejection } from './support/rejection';
import {
  HEADER,
  INJECTION_TOOL,
  JUDGE_PATH,
  KEEPALIVE_MS,
  SHADOW,
  SYSTEM,
  allow,
  answers,
  block,
  catalog,
  chat,
  judge,
  judgeAfter,
  judgeReply,
  judgeRequests,
  useShadowAgentGateway,
} from './support/shadow-agent-kit';

/** The operator defaults of the judges, from the environment. */
useShadowAgentGateway();

describe('operator defaults (SHADOW_AGENT_MODEL, SHADOW_AGENT_TIMEOUT_MS, PROMPT_INJECTION_DETECTOR_MODEL)', () => {
  let env: TestGateway;
  let client: OpenAI;
  beforeAll(async () => {
    env = await startGateway({
      CATALOG_PATH: catalog(answers.url, judge.url),
      SSE_KEEPALIVE_MS: String(KEEPALIVE_MS),
      SHADOW_AGENT_MODEL: 'judge-mini',
      // Short enough to wait out in a test, long enough for a judge on a loaded machine.
      SHADOW_AGENT_TIMEOUT_MS: '1500',
      PROMPT_INJECTION_DETECTOR_MODEL: 'judge-mini',
    });
    client = new OpenAI({ baseURL: env.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(() => env.close());

  const bare = (properties: Record<string, unknown> = {}): any => ({
    type: 'function',
    function: { name: SHADOW, parameters: { type: 'object', properties } },
  });

  it('judges with SHADOW_AGENT_MODEL when the tool names no model', async () => {
    judge.on(JUDGE_PATH, () => block('off policy'));
    const { data, response } = await client.chat.completions
      .create({ ...chat.body({ noProtection: true }, false), tools: [bare()] })
      .withResponse();
    expect(data.choices[0].finish_reason).toBe('content_filter');
    expect(response.headers.get(HEADER)).toBe(`${SHADOW}=blocked;reason="off policy"`);
    expect(judgeRequests()[0].body.model).toBe('judge-mini');
  });

  it('gives up after SHADOW_AGENT_TIMEOUT_MS unless the tool sets timeout_ms', async () => {
    // The header names the 1500 ms that ended the wait; the clock only checks that the
    // gateway did not sit out a judge five seconds late, with room for a loaded machine.
    judge.on(JUDGE_PATH, judgeAfter(5000, allow()));
    let started = Date.now();
    const { response } = await client.chat.completions
      .create({ ...chat.body({ noProtection: true }, false), tools: [bare()] })
      .withResponse();
    expect(Date.now() - started).toBeLessThan(4000);
    expect(response.headers.get(HEADER)).toMatch(/=blocked;error="[^"]*1500 ms"$/);
    judge.on(JUDGE_PATH, judgeAfter(900, allow()));
    started = Date.now();
    const longer = await client.chat.completions
      .create({
        ...chat.body({ noProtection: true }, false),
        tools: [bare({ timeout_ms: { default: 5000 } })],
      })
      .withResponse();
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
    expect(longer.response.headers.get(HEADER)).toBe(`${SHADOW}=pass`);
  });

  it('rejects an unknown model in the tool even with an operator default', async () => {
    const err = await rejection(
      client.chat.completions.create({
        ...chat.body({ noProtection: true }, false),
        tools: [bare({ model: { default: 'no-such-model' } })],
      }),
    );
    expect(err.status).toBe(400);
    expect(err.param).toBe('tools[0].function.parameters.properties.model');
  });

  it('asks PROMPT_INJECTION_DETECTOR_MODEL about an uncertain request', async () => {
    judge.on(JUDGE_PATH, () =>
      judgeReply(JSON.stringify({ verdict: 'benign', reason: 'a retry request' })),
    );
    const score = scanParts(
      [{ source: 'user', text: 'Please ignore the previous answer and try again.' }],
      { threshold: 0.5 },
    ).score;
    const { response } = await client.chat.completions
      .create({
        model: 'gpt-answer',
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'Please ignore the previous answer and try again.' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: INJECTION_TOOL,
              parameters: {
                type: 'object',
                properties: { threshold: { default: Math.round((score - 0.1) * 100) / 100 } },
              },
            },
          },
        ],
      })
      .withResponse();
    expect(response.headers.get(HEADER)).toBe(
      `${INJECTION_TOOL}=pass;score=${score.toFixed(2)};stage=model`,
    );
    expect(judgeRequests()).toHaveLength(1);
  });
});
