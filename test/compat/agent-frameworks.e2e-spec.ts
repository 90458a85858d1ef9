import { execFile } from 'node:child_process';
import { join } from 'node:path';
import {
  Agent,
  OpenAIProvider,
  setTracingDisabled,
  tool,
  type ModelProvider,
} from '@openai/agents';
import { z } from 'zod';
import { TEST_KEY } from '../support/gateway';
import { type CompatRig, MODELS, startCompatRig } from './compat-upstream';

/**
 * Agent frameworks as their users wire them, by base URL and key only: the OpenAI Agents SDK
 * (chat completions and Responses models) and Mastra (an OpenAI-compatible model config).
 * Each run asks for a tool, so the framework runs it and sends the result back; the fake
 * providers answer like models, with signed reasoning when asked.
 */

jest.setTimeout(60_000);

// The SDK would otherwise export traces to OpenAI: nothing leaves the machine.
setTracingDisabled(true);

let rig: CompatRig;

beforeAll(async () => {
  rig = await startCompatRig();
});
afterAll(() => rig.close());

/** The generation requests that reached the fake Anthropic API since `from`. */
function anthropicSince(from: number): Record<string, any>[] {
  return rig.upstream.requests
    .slice(from)
    .filter((r) => r.path === '/v1/messages')
    .map((r) => r.body as Record<string, any>);
}

describe('OpenAI Agents SDK', () => {
  const weather = tool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => Promise.resolve(`18 degrees in ${city}`),
  });

  function provider(useResponses: boolean): ModelProvider {
    return new OpenAIProvider({ apiKey: TEST_KEY, baseURL: rig.gw.baseURL, useResponses });
  }

  it.each([
    ['chat completions, a Claude model with reasoning', false, MODELS.claude, false],
    ['chat completions, a Claude model with reasoning, streamed', false, MODELS.claude, true],
    ['chat completions, a GPT model', false, MODELS.gptChat, false],
    ['Responses, a GPT model', true, MODELS.gptResponses, false],
    ['Responses, a GPT model, streamed', true, MODELS.gptResponses, true],
    ['chat completions, a local model, streamed', false, MODELS.localClaude, true],
  ])('runs a tool round trip (%s)', async (_, useResponses, model, stream) => {
    const agent = new Agent({
      name: 'Weather',
      instructions: 'You are the compatibility suite.',
      model,
      tools: [weather],
      modelSettings: { reasoning: { effort: 'low' } },
    });
    const from = rig.upstream.requests.length;
    const options = { maxTurns: 4 };
    const config = { modelProvider: provider(useResponses) };
    const { Runner } = await import('@openai/agents');
    const runner = new Runner(config);
    let output: unknown;
    if (stream) {
      const result = await runner.run(agent, 'Use weather for Paris.', { ...options, stream });
      await result.completed;
      output = result.finalOutput;
    } else {
      output = (await runner.run(agent, 'Use weather for Paris.', options)).finalOutput;
    }
    if (model === MODELS.localClaude) {
      expect(typeof output).toBe('string');
      return;
    }
    expect(output).toBe('Tool result: 18 degrees in Paris');
    if (model === MODELS.claude) {
      // The second turn is one Anthropic accepts: thinking only with signed thinking first.
      const second = anthropicSince(from).at(-1)!;
      const assistant = (second.messages as { role: string; content: any[] }[]).findLast(
        (m) => m.role === 'assistant',
      )!;
      if (second.thinking !== undefined) {
        expect(assistant.content[0].type).toBe('thinking');
      } else {
        expect(assistant.content.some((b) => b.type === 'thinking')).toBe(false);
      }
    }
  });

  it('answers a plain prompt on a local model through the Responses API', async () => {
    const agent = new Agent({ name: 'Plain', instructions: 'Be brief.', model: MODELS.localGpt });
    const { Runner } = await import('@openai/agents');
    const out = await new Runner({ modelProvider: provider(true) }).run(agent, 'Hello gateway');
    expect(out.finalOutput).toBe('Echo: Hello gateway');
  });
});

describe('Mastra', () => {
  /** One agent session in a child process (see mastra-run.mjs); resolves with its text. */
  function mastra(model: string, stream: boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [join(__dirname, 'mastra-run.mjs'), rig.gw.baseURL, TEST_KEY, model, stream ? '1' : '0'],
        {
          env: { PATH: process.env.PATH ?? '', MASTRA_TELEMETRY_DISABLED: '1' },
          timeout: 50_000,
        },
        (error, stdout, stderr) => {
          if (error) {
            reject(new Error(`mastra run failed: ${stderr}`));
            return;
          }
          resolve((JSON.parse(stdout.trim().split('\n').at(-1)!) as { text: string }).text);
        },
      );
    });
  }

  it.each([
    ['a Claude model, translated', MODELS.claude, false],
    ['a Claude model, translated, streamed', MODELS.claude, true],
    ['a GPT model, native', MODELS.gptChat, false],
  ])('runs a tool round trip (%s)', async (_, model, stream) => {
    expect(await mastra(model, stream)).toContain('Tool result: 18 degrees in Paris');
  });
});
