import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { TEST_KEY } from '../support/gateway';
import {
  type CompatRig,
  MODELS,
  REASONING_TEXT,
  isLocal,
  startCompatRig,
  expectAnswer as expectAnswerOf,
} from './compat-upstream';

/**
 * LangChain JS (@langchain/openai 1.4, @langchain/anthropic 1.5) against the gateway with
 * only the base URL and the key changed: ChatOpenAI on Chat Completions and on the
 * Responses API (`useResponsesApi`), ChatAnthropic on Messages; invoke, stream, bindTools
 * with a round trip, withStructuredOutput, and reasoning.
 */

const SYSTEM = 'You are the LangChain compatibility suite. Answer briefly.';

const weather = tool(({ city }: { city: string }) => `18 degrees in ${city}`, {
  name: 'weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
});

const forecast = z.object({ city: z.string(), temperature: z.number() });

type Flavour = 'ChatOpenAI (chat completions)' | 'ChatOpenAI (useResponsesApi)' | 'ChatAnthropic';

const MODELS_OF: Record<Flavour, string[]> = {
  'ChatOpenAI (chat completions)': Object.values(MODELS),
  'ChatOpenAI (useResponsesApi)': [
    MODELS.localGpt,
    MODELS.gptResponses,
    MODELS.gptChat,
    MODELS.vllm,
  ],
  ChatAnthropic: Object.values(MODELS),
};

let rig: CompatRig;

beforeAll(async () => {
  rig = await startCompatRig();
});
afterAll(() => rig.close());

/** A chat model as a user builds it; `reasoning` adds the options that turn reasoning on. */
function make(flavour: Flavour, model: string, reasoning = false): BaseChatModel {
  switch (flavour) {
    case 'ChatOpenAI (chat completions)':
      return new ChatOpenAI({
        model,
        apiKey: TEST_KEY,
        configuration: { baseURL: rig.gw.baseURL },
        maxRetries: 0,
        // ChatOpenAI sends `reasoning` only for model names it knows (o1.., gpt-5..);
        // modelKwargs goes into the body whatever the name.
        ...(reasoning ? { modelKwargs: { reasoning_effort: 'low' } } : {}),
      });
    case 'ChatOpenAI (useResponsesApi)':
      return new ChatOpenAI({
        model,
        apiKey: TEST_KEY,
        configuration: { baseURL: rig.gw.baseURL },
        useResponsesApi: true,
        maxRetries: 0,
        ...(reasoning ? { modelKwargs: { reasoning: { effort: 'low', summary: 'auto' } } } : {}),
      });
    case 'ChatAnthropic':
      return new ChatAnthropic({
        model,
        apiKey: TEST_KEY,
        // The Anthropic SDK underneath appends `/v1/messages`: the root, no `/v1`.
        anthropicApiUrl: rig.gw.origin,
        maxRetries: 0,
        ...(reasoning
          ? { maxTokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } as const }
          : {}),
      });
  }
}

function expectAnswer(model: string, text: string | null | undefined, user: string): void {
  expectAnswerOf(rig, SYSTEM, model, text, user);
}

/** The reasoning text a message carries, wherever this integration puts it. */
function reasoningOf(message: AIMessage): string {
  const kwargs = message.additional_kwargs as {
    reasoning_content?: string;
    reasoning?: { summary?: { text: string }[] };
  };
  if (typeof kwargs.reasoning_content === 'string') {
    return kwargs.reasoning_content;
  }
  if (kwargs.reasoning?.summary) {
    return kwargs.reasoning.summary.map((s) => s.text).join('');
  }
  if (Array.isArray(message.content)) {
    return message.content
      .map((b: { type: string; thinking?: string }) =>
        b.type === 'thinking' ? (b.thinking ?? '') : '',
      )
      .join('');
  }
  return '';
}

describe.each(Object.keys(MODELS_OF) as Flavour[])('LangChain %s', (flavour) => {
  describe.each(MODELS_OF[flavour])('model %s', (model) => {
    it('invoke answers, with the system prompt as a SystemMessage', async () => {
      const reply = await make(flavour, model).invoke([
        new SystemMessage(SYSTEM),
        new HumanMessage('ping'),
      ]);
      expectAnswer(model, reply.text, 'ping');
      expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
    });

    it('stream yields the answer in chunks', async () => {
      const stream = await make(flavour, model).stream([
        new SystemMessage(SYSTEM),
        new HumanMessage('stream me'),
      ]);
      let full: AIMessageChunk | undefined;
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        full = full ? full.concat(chunk) : chunk;
      }
      expect(chunks).toBeGreaterThan(1);
      expectAnswer(model, full!.text, 'stream me');
    });

    it('bindTools: calls the tool, then answers with its result', async () => {
      const llm = make(flavour, model).bindTools!([weather]);
      const history = [new SystemMessage(SYSTEM), new HumanMessage('use weather with city=Paris')];
      const call = await llm.invoke(history);
      expect(call.tool_calls).toEqual([
        expect.objectContaining({ name: 'weather', args: { city: 'Paris' } }),
      ]);
      const result: ToolMessage = await weather.invoke(call.tool_calls![0]);
      const answer = await llm.invoke([...history, call, result]);
      expect(answer.text).toContain('18 degrees in Paris');
      expect(answer.tool_calls ?? []).toEqual([]);
    });

    if (
      flavour === 'ChatOpenAI (useResponsesApi)' &&
      (model === MODELS.localGpt || model === MODELS.vllm)
    ) {
      it('continues a tool conversation with previous_response_id (stored by the gateway)', async () => {
        const llm = make(flavour, model).bindTools!([weather]);
        const call = await llm.invoke([
          new SystemMessage(SYSTEM),
          new HumanMessage('use weather with city=Paris'),
        ]);
        const result: ToolMessage = await weather.invoke(call.tool_calls![0]);
        const previous = (call.response_metadata as { id?: string }).id;
        expect(previous).toMatch(/^resp_/);
        // Only the new turn: the call it answers is in the stored conversation.
        const answer = await llm.invoke([new SystemMessage(SYSTEM), result], {
          previous_response_id: previous,
        } as never);
        expect(answer.text).toContain('18 degrees in Paris');
        const next = await llm.invoke([new SystemMessage(SYSTEM), new HumanMessage('thanks')], {
          previous_response_id: (answer.response_metadata as { id?: string }).id,
        } as never);
        // Each turn's SystemMessage is an input item of the conversation, carried as OpenAI
        // carries them: the fake upstream sees the system prompt once per turn.
        expect(next.text).toBe(isLocal(model) ? 'Echo: thanks' : 'Hello from chat: thanks');
      });
    }

    it('streams a tool call with its arguments', async () => {
      const llm = make(flavour, model).bindTools!([weather]);
      let full: AIMessageChunk | undefined;
      for await (const chunk of await llm.stream([
        new SystemMessage(SYSTEM),
        new HumanMessage('use weather with city=Paris'),
      ])) {
        full = full ? full.concat(chunk) : chunk;
      }
      expect(full!.tool_calls).toEqual([
        expect.objectContaining({ name: 'weather', args: { city: 'Paris' } }),
      ]);
    });

    it('reasons when forced through the options for unknown model names', async () => {
      const reply = await make(flavour, model, true).invoke([
        new SystemMessage(SYSTEM),
        new HumanMessage('think'),
      ]);
      expectAnswer(model, reply.text, 'think');
      const reasoning = reasoningOf(reply);
      if (isLocal(model)) {
        expect(reasoning).toMatch(/^The user sent a message of 1 word\./);
      } else {
        expect(reasoning).toBe(REASONING_TEXT);
      }
    });

    it('withStructuredOutput (function calling) returns a parsed object', async () => {
      const structured = make(flavour, model).withStructuredOutput(forecast, {
        method: 'functionCalling',
      });
      const object = await structured.invoke([
        new SystemMessage(SYSTEM),
        new HumanMessage('forecast for city=Paris temperature=18'),
      ]);
      expect(object).toEqual({ city: 'Paris', temperature: 18 });
    });

    it('withStructuredOutput (default json schema) returns a parsed object', async () => {
      const structured = make(flavour, model).withStructuredOutput(forecast, {
        method: 'jsonSchema',
      });
      const object = await structured.invoke([
        new SystemMessage(SYSTEM),
        new HumanMessage('forecast for city=Paris temperature=18'),
      ]);
      expect(forecast.parse(object)).toEqual(object);
    });
  });
});
