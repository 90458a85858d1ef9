import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  generateObject,
  generateText,
  type LanguageModel,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { z } from 'zod';
import { TEST_KEY } from '../support/gateway';
import {
  type CompatRig,
  MODELS,
  REASONING_TEXT,
  isLocal,
  startCompatRig,
  upstreamSeen,
  expectAnswer as expectAnswerOf,
} from './compat-upstream';

/**
 * The Vercel AI SDK (ai 6) against the gateway, as a user would wire it: only the base URL
 * and the key change. Each provider package speaks one wire format: `openai(...)` the
 * Responses API, `openai.chat(...)` and `@ai-sdk/openai-compatible` Chat Completions,
 * `@ai-sdk/anthropic` Messages. Every model is tried through every format that serves it:
 * the local models, and the fake providers natively and translated.
 */

const SYSTEM = 'You are the compatibility suite. Answer briefly.';

const weather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: ({ city }) => Promise.resolve(`18 degrees in ${city}`),
});

const forecast = z.object({ city: z.string(), temperature: z.number() });

let rig: CompatRig;

beforeAll(async () => {
  rig = await startCompatRig();
});
afterAll(() => rig.close());

type Make = (model: string) => LanguageModel;

interface Flavour {
  name: string;
  make: Make;
  /** providerOptions that turn reasoning on for a model the library does not know. */
  reasoning: Record<string, Record<string, any>>;
}

function flavours(): Flavour[] {
  const openai = createOpenAI({ baseURL: rig.gw.baseURL, apiKey: TEST_KEY });
  const compatible = createOpenAICompatible({
    name: 'gateway',
    baseURL: rig.gw.baseURL,
    apiKey: TEST_KEY,
    // Without it the schema only goes into the prompt, with `json_object`.
    supportsStructuredOutputs: true,
  });
  // @ai-sdk/anthropic appends `/messages` to its base URL, so it wants the `/v1`.
  const anthropic = createAnthropic({ baseURL: rig.gw.baseURL, apiKey: TEST_KEY });
  return [
    {
      name: 'openai(...) Responses API',
      make: (m) => openai(m),
      // Unknown model ids are not reasoning models to the SDK: it drops the effort.
      reasoning: {
        openai: { forceReasoning: true, reasoningEffort: 'low', reasoningSummary: 'auto' },
      },
    },
    {
      name: 'openai.chat(...)',
      make: (m) => openai.chat(m),
      reasoning: { openai: { forceReasoning: true, reasoningEffort: 'low' } },
    },
    {
      name: '@ai-sdk/openai-compatible',
      make: (m) => compatible.chatModel(m),
      reasoning: { gateway: { reasoningEffort: 'low' } },
    },
    {
      name: '@ai-sdk/anthropic',
      make: (m) => anthropic(m),
      reasoning: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
    },
  ];
}

function expectAnswer(model: string, text: string | null | undefined, user: string): void {
  expectAnswerOf(rig, SYSTEM, model, text, user);
}

// Flavours are built once the gateway is up; describe blocks need the names now.
const FLAVOUR_NAMES = [
  'openai(...) Responses API',
  'openai.chat(...)',
  '@ai-sdk/openai-compatible',
  '@ai-sdk/anthropic',
] as const;
const MODELS_OF: Record<(typeof FLAVOUR_NAMES)[number], string[]> = {
  'openai(...) Responses API': [MODELS.localGpt, MODELS.gptResponses, MODELS.gptChat, MODELS.vllm],
  'openai.chat(...)': Object.values(MODELS),
  '@ai-sdk/openai-compatible': Object.values(MODELS),
  '@ai-sdk/anthropic': Object.values(MODELS),
};

describe.each(FLAVOUR_NAMES)('Vercel AI SDK, %s', (flavourName) => {
  let flavour: Flavour;
  beforeAll(() => {
    flavour = flavours().find((f) => f.name === flavourName)!;
  });

  describe.each(MODELS_OF[flavourName])('model %s', (model) => {
    it('generateText answers with the system prompt given as `system`', async () => {
      const result = await generateText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'ping',
      });
      expectAnswer(model, result.text, 'ping');
      expect(result.finishReason).toBe('stop');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
    });

    it('streamText streams the same answer', async () => {
      const result = streamText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'stream me',
        onError: ({ error }) => {
          throw error;
        },
      });
      const deltas: string[] = [];
      for await (const delta of result.textStream) {
        deltas.push(delta);
      }
      expect(deltas.length).toBeGreaterThan(1);
      expectAnswer(model, deltas.join(''), 'stream me');
      expect(await result.finishReason).toBe('stop');
    });

    it('calls a tool and answers with its result (round trip)', async () => {
      const result = await generateText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'use weather with city=Paris',
        tools: { weather },
        stopWhen: stepCountIs(3),
      });
      expect(result.steps[0].toolCalls).toEqual([
        expect.objectContaining({ toolName: 'weather', input: { city: 'Paris' } }),
      ]);
      expect(result.text).toContain('18 degrees in Paris');
      expect(result.steps).toHaveLength(2);
    });

    it('streams a tool call and the answer after its result', async () => {
      const result = streamText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'use weather with city=Paris',
        tools: { weather },
        stopWhen: stepCountIs(3),
        onError: ({ error }) => {
          throw error;
        },
      });
      expect(await result.text).toContain('18 degrees in Paris');
      const steps = await result.steps;
      expect(steps[0].toolCalls.map((c) => c.toolName)).toEqual(['weather']);
    });

    it('continues a conversation from result.response.messages', async () => {
      // The Responses provider replays earlier answers as item references (its default
      // `store: true`): the gateway resolves those it stored (the local and translated
      // models). The fake OpenAI Responses API behind the native models stores nothing, so
      // there the items themselves are asked for, as a real OpenAI would not need.
      const native = model === MODELS.gptResponses || model === MODELS.gptChat;
      const providerOptions: Record<string, Record<string, boolean>> = flavourName ===
        'openai(...) Responses API' && native
        ? { openai: { store: false } }
        : {};
      const first = await generateText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'one',
        providerOptions,
      });
      const second = await generateText({
        model: flavour.make(model),
        system: SYSTEM,
        providerOptions,
        messages: [
          { role: 'user', content: 'one' },
          ...first.response.messages,
          { role: 'user', content: 'two' },
        ],
      });
      expectAnswer(model, second.text, 'two');
      if (!isLocal(model)) {
        // The earlier answer went upstream as history.
        expect(JSON.stringify(rig.lastUpstream()!.body)).toContain(first.text);
      }
    });

    it('reasons when the option that forces it is set', async () => {
      const result = await generateText({
        model: flavour.make(model),
        system: SYSTEM,
        prompt: 'think',
        // @ai-sdk/anthropic adds the thinking budget on top: 3072, under every model's cap.
        maxOutputTokens: 2048,
        providerOptions: flavour.reasoning,
      });
      expectAnswer(model, result.text, 'think');
      if (flavourName === 'openai.chat(...)') {
        // OpenAI's chat API has no reasoning text, so this provider reads none (the
        // gateway's `reasoning_content` is for @ai-sdk/openai-compatible); the request
        // still asked for reasoning, and the model reasoned.
        if (isLocal(model)) {
          expect(result.usage.outputTokenDetails.reasoningTokens).toBeGreaterThan(0);
        } else {
          expect(upstreamSeen(rig).ask.reasoning).toBe(true);
        }
      } else if (isLocal(model)) {
        expect(result.reasoningText).toMatch(/^The user sent a message of 1 word\./);
      } else {
        expect(result.reasoningText).toBe(REASONING_TEXT);
      }
    });

    it('generateObject returns an object matching the schema', async () => {
      const { object } = await generateObject({
        model: flavour.make(model),
        system: SYSTEM,
        schema: forecast,
        prompt: 'forecast for city=Paris temperature=18',
      });
      expect(forecast.parse(object)).toEqual(object);
      if (!isLocal(model)) {
        expect(object).toEqual({ city: 'Paris', temperature: 18 });
      }
    });
  });
});
