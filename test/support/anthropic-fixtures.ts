import Anthropic from '@anthropic-ai/sdk';
import AnthropicLegacy from 'anthropic-sdk-0x';
import type { SseEvent } from './fake-upstream';
import { writeCatalog } from './gateway';

/** Builders for realistic Anthropic Messages bodies and event streams. */

/** Both Anthropic SDK lines: what each sends (wire-formats.md 6.4). */
export const ANTHROPIC_SDKS = [
  {
    line: '1.x',
    Sdk: Anthropic,
    version: '2026-10-21',
    keyHeader: 'authorization',
  },
  {
    line: '0.x',
    // Same runtime surface; typed as the current line so one test body serves both.
    Sdk: AnthropicLegacy as unknown as typeof Anthropic,
    version: '2023-06-01',
    keyHeader: 'x-api-key',
  },
] as const;

export const UPSTREAM_MODEL = 'claude-upstream-4-5-20250929';

/**
 * A catalog with a fake Anthropic upstream (two models: one with another upstream id, one
 * without), a fake OpenAI upstream, and the local models.
 */
export function messagesCatalog(upstreamUrl: string): string {
  return writeCatalog(`
providers:
  - name: fake-anthropic
    kind: anthropic
    base_url: ${upstreamUrl}
    api_key_env: TEST_UPSTREAM_KEY
    anthropic_version: '2023-01-01'
  - name: fake-openai
    kind: openai
    base_url: ${upstreamUrl}/v1
    api_key_env: TEST_UPSTREAM_KEY
  - name: local
    kind: local
models:
  - { id: test-claude, upstream_id: ${UPSTREAM_MODEL}, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: claude-same-id, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 } }
  - { id: test-gpt, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
  - { id: chat-only, provider: fake-openai, family: openai, context_window: 8192, max_output_tokens: 1024, pricing: { input: 1, output: 1 }, endpoints: [chat_completions] }
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

const USAGE = {
  input_tokens: 25,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 12,
  service_tier: 'standard',
};

/** A whole non-streamed `message`. */
export function anthropicMessage(
  model: string,
  content: object[],
  extra: Record<string, unknown> = {},
): object {
  return {
    id: 'msg_01Aq9w938a90dw8q',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: USAGE,
    ...extra,
  };
}

/** Each event with its `event:` line, as Anthropic sends them. */
export function named(events: object[]): SseEvent[] {
  return events.map((e) => ({ event: (e as { type: string }).type, data: e }));
}

function messageStart(model: string, usage: object = USAGE): object {
  return {
    type: 'message_start',
    message: {
      id: 'msg_01Stream',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  };
}

/** A text answer in `pieces`, with a ping after the block starts. */
export function textEvents(model: string, pieces: string[], usage: object = USAGE): object[] {
  return [
    messageStart(model, usage),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    ...pieces.map((text) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text },
    })),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: pieces.length + 10 },
    },
    { type: 'message_stop' },
  ];
}

export const SIGNATURE = 'EqQBCkYIBxgCKkBp0L3Signed+Thinking/Payload==';

/** Thinking with its signature, a sentence, then a tool call with split arguments. */
export function thinkingToolEvents(model: string): object[] {
  const delta = (index: number, d: object): object => ({
    type: 'content_block_delta',
    index,
    delta: d,
  });
  return [
    messageStart(model),
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    },
    delta(0, { type: 'thinking_delta', thinking: 'The user wants the weather.' }),
    delta(0, { type: 'thinking_delta', thinking: ' I should call get_weather.' }),
    delta(0, { type: 'signature_delta', signature: SIGNATURE }),
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    delta(1, { type: 'text_delta', text: "I'll check the weather." }),
    { type: 'content_block_stop', index: 1 },
    {
      type: 'content_block_start',
      index: 2,
      content_block: {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835',
        name: 'get_weather',
        input: {},
      },
    },
    delta(2, { type: 'input_json_delta', partial_json: '' }),
    delta(2, { type: 'input_json_delta', partial_json: '{"city": "Pa' }),
    delta(2, { type: 'input_json_delta', partial_json: 'ris"}' }),
    { type: 'content_block_stop', index: 2 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 89 },
    },
    { type: 'message_stop' },
  ];
}

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, unit: { type: 'string', default: 'celsius' } },
    required: ['city'],
  },
};
