import { Agent, Runner, tool } from '@openai/agents';
import { OpenAIProvider } from '@openai/agents-openai';
import { z } from 'zod';
import { TEST_KEY } from '../support/gateway';
import {
  type CompatRig,
  MODELS,
  isLocal,
  startCompatRig,
  expectAnswer as expectAnswerOf,
} from './compat-upstream';

/**
 * The OpenAI Agents SDK (@openai/agents 0.20) on the Responses API against the gateway:
 * an agent's tool loop, then the next turn continued with `previousResponseId`, on the
 * local model and on models the gateway translates (it stores their responses itself).
 */

const SYSTEM = 'You are the Agents SDK compatibility suite. Answer briefly.';

const weather = tool({
  name: 'weather',
  description: 'The weather of a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => Promise.resolve(`18 degrees in ${city}`),
});

let rig: CompatRig;
let runner: Runner;

beforeAll(async () => {
  rig = await startCompatRig();
  runner = new Runner({
    modelProvider: new OpenAIProvider({
      apiKey: TEST_KEY,
      baseURL: rig.gw.baseURL,
      useResponses: true,
    }),
    tracingDisabled: true,
  });
});
afterAll(() => rig.close());

describe.each([MODELS.localGpt, MODELS.vllm])('OpenAI Agents SDK, model %s', (model) => {
  const agent = () => new Agent({ name: 'weather', instructions: SYSTEM, model, tools: [weather] });

  it('runs the tool loop, then continues the conversation with previousResponseId', async () => {
    const first = await runner.run(agent(), 'use weather with city=Paris');
    expect(String(first.finalOutput)).toContain('18 degrees in Paris');
    expect(first.lastResponseId).toMatch(/^resp_/);
    const second = await runner.run(agent(), 'thanks', {
      previousResponseId: first.lastResponseId,
    });
    expectAnswerOf(rig, SYSTEM, model, String(second.finalOutput), 'thanks');
    if (!isLocal(model)) {
      // The upstream got the earlier turn, tool call and result, rebuilt by the gateway.
      const sent = JSON.stringify(rig.lastUpstream()!.body);
      expect(sent).toContain('use weather with city=Paris');
      expect(sent).toContain('18 degrees in Paris');
    }
  });

  it('streams the tool loop and a continued turn', async () => {
    const first = await runner.run(agent(), 'use weather with city=Paris', { stream: true });
    await first.completed;
    expect(String(first.finalOutput)).toContain('18 degrees in Paris');
    const second = await runner.run(agent(), 'and now?', {
      stream: true,
      previousResponseId: first.lastResponseId,
    });
    await second.completed;
    expectAnswerOf(rig, SYSTEM, model, String(second.finalOutput), 'and now?');
  });
});
