import type { CanonicalRequest } from '../core/canonical';
import { decodeChatRequest } from '../formats/chat-completions/chat.decoder';
import type { ChatCompletionRequestDto } from '../formats/chat-completions/chat-request.dto';
import { decodeMessagesRequest } from '../formats/messages/messages.decoder';
import type { MessagesRequestDto } from '../formats/messages/messages-request.dto';
import { decodeResponsesRequest } from '../formats/responses/responses.decoder';
import { testModel } from '../testing/test-model';
import { toAnthropicRequest } from './providers/anthropic/to-anthropic';
import { toOpenAiChatRequest } from './providers/openai/to-openai-chat';
import { toOpenAiResponsesRequest } from './providers/openai/to-openai-responses';

/**
 * What coding agents and agent frameworks send, translated: Claude Code's Messages requests
 * to OpenAI models, and OpenAI-format clients (the Agents SDK, Codex) to Claude models.
 */

/** Claude Code's `metadata.user_id`: a JSON string of about 150 characters. */
const CLAUDE_CODE_USER = JSON.stringify({
  device_id: '4f1c2b7e9a0d4c3b8e6f5a1d2c3b4a59e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3',
  account_uuid: '',
  session_id: '0d9f8e7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f',
});

const claudeCode = (body: Partial<MessagesRequestDto> = {}): CanonicalRequest =>
  decodeMessagesRequest({
    model: 'gpt-4o',
    max_tokens: 32000,
    system: [
      { type: 'text', text: 'You are Claude Code.' },
      { type: 'text', text: 'Long agent prompt.', cache_control: { type: 'ephemeral' } },
    ],
    tools: [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: { type: 'object', properties: { command: { type: 'string' } } },
        cache_control: { type: 'ephemeral', ttl: '1h' },
      },
    ],
    messages: [{ role: 'user', content: 'List the files.' }],
    metadata: { user_id: CLAUDE_CODE_USER },
    ...body,
  });

const chat = (body: Partial<ChatCompletionRequestDto>): CanonicalRequest =>
  decodeChatRequest({ model: 'claude', messages: [], ...body });

const gpt4o = testModel('chat_completions', { maxOutputTokens: 16384 });
const gptResponses = testModel('responses', { maxOutputTokens: 16384 });
const claude = testModel('messages', { maxOutputTokens: 64000 });

describe('output caps on translated requests', () => {
  it.each([
    ['chat completions', () => toOpenAiChatRequest(claudeCode(), gpt4o), 'max_completion_tokens'],
    ['responses', () => toOpenAiResponsesRequest(claudeCode(), gptResponses), 'max_output_tokens'],
  ])("lowers Claude Code's max_tokens to the model's limit on %s and lists it", (_, run, field) => {
    const { body, dropped } = run();
    expect(body[field]).toBe(16384);
    expect(dropped).toContain('max_tokens');
  });

  it('keeps a cap within the limit as it is, unlisted', () => {
    const { body, dropped } = toOpenAiChatRequest(claudeCode({ max_tokens: 4000 }), gpt4o);
    expect(body.max_completion_tokens).toBe(4000);
    expect(dropped).not.toContain('max_tokens');
  });

  it('lowers a chat cap for a Claude model with a smaller limit, thinking budget included', () => {
    const small = testModel('messages', { maxOutputTokens: 8192 });
    const { body, dropped } = toAnthropicRequest(
      chat({
        messages: [{ role: 'user', content: 'hi' }],
        max_completion_tokens: 20000,
        reasoning_effort: 'high',
      }),
      small,
    );
    expect(body.max_tokens).toBe(8192);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8191 });
    expect(dropped).toEqual(['max_completion_tokens']);
  });
});

describe('thinking on a tool turn that lost its signed thinking', () => {
  const toolTurn = (assistant: Record<string, unknown>): ChatCompletionRequestDto['messages'] => [
    { role: 'system', content: 'Use tools.' },
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } },
      ],
      ...assistant,
    },
    { role: 'tool', tool_call_id: 'call_1', content: '18C' },
  ];

  it('turns thinking off and lists it when the assistant tool turn has no signed thinking', () => {
    const { body, dropped } = toAnthropicRequest(
      chat({ messages: toolTurn({}), reasoning_effort: 'high' }),
      claude,
    );
    expect(body.thinking).toBeUndefined();
    expect(dropped).toEqual(['reasoning_effort']);
  });

  it('keeps thinking when the signed blocks came back on the message', () => {
    const blocks = [{ type: 'thinking', thinking: 'Need weather.', signature: 'sig-1' }];
    const { body, dropped } = toAnthropicRequest(
      chat({ messages: toolTurn({ thinking_blocks: blocks }), reasoning_effort: 'high' }),
      claude,
    );
    expect(body.thinking).toMatchObject({ type: 'enabled' });
    expect(dropped).toEqual([]);
    const assistant = (body.messages as { content: Record<string, unknown>[] }[])[1];
    expect(assistant.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Need weather.',
      signature: 'sig-1',
    });
  });

  it('reads the blocks nested in the first content part, as the unstreamed Agents SDK sends them', () => {
    const nested = {
      content: [
        {
          type: 'text',
          text: 'Checking.',
          role: 'assistant',
          thinking_blocks: [{ type: 'thinking', thinking: 'Need weather.', signature: 'sig-2' }],
        },
      ],
    };
    const req = chat({ messages: toolTurn(nested), reasoning_effort: 'high' });
    const { body, dropped } = toAnthropicRequest(req, claude);
    expect(dropped).toEqual([]);
    const assistant = (body.messages as { content: Record<string, unknown>[] }[])[1];
    expect(assistant.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(assistant.content[0].signature).toBe('sig-2');
  });

  it('turns it off too when text follows the tool results (one user turn for Anthropic)', () => {
    const messages = [...toolTurn({}), { role: 'user' as const, content: 'And Rome?' }];
    const { body } = toAnthropicRequest(chat({ messages, reasoning_effort: 'low' }), claude);
    expect(body.thinking).toBeUndefined();
  });

  it('leaves thinking on when no tool call is pending', () => {
    const messages: ChatCompletionRequestDto['messages'] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Weather?' },
    ];
    const { body } = toAnthropicRequest(chat({ messages, reasoning_effort: 'low' }), claude);
    expect(body.thinking).toMatchObject({ type: 'enabled' });
  });
});

describe('prompt caching across translation', () => {
  it("turns Claude Code's breakpoints into a stable prompt_cache_key and lists cache_control", () => {
    const first = toOpenAiChatRequest({ ...claudeCode(), cacheScope: 'key_1' }, gpt4o);
    expect(first.dropped).toContain('cache_control');
    expect(first.body.prompt_cache_key).toMatch(/^gw-[0-9a-f]{32}$/);
    // The next turn of the same session: same key; another gateway key: another.
    const next = toOpenAiChatRequest(
      {
        ...claudeCode({
          messages: [
            { role: 'user', content: 'List the files.' },
            { role: 'assistant', content: 'a.txt' },
            { role: 'user', content: 'Open it.' },
          ],
        }),
        cacheScope: 'key_1',
      },
      gpt4o,
    );
    expect(next.body.prompt_cache_key).toBe(first.body.prompt_cache_key);
    const other = toOpenAiResponsesRequest({ ...claudeCode(), cacheScope: 'key_2' }, gptResponses);
    expect(other.body.prompt_cache_key).not.toBe(first.body.prompt_cache_key);
    expect(JSON.stringify([first.body, other.body])).not.toContain('cache_control');
  });

  it('maps metadata.user_id to hashed safety_identifier and prompt_cache_key, never raw', () => {
    const { body } = toOpenAiResponsesRequest(claudeCode(), gptResponses);
    expect(body.user).toBeUndefined();
    expect(body.safety_identifier).toMatch(/^gw-[0-9a-f]{32}$/);
    expect(JSON.stringify(body)).not.toContain('session_id');
  });

  it("keeps a Messages client's markers where they were on an Anthropic target", () => {
    const { body, dropped } = toAnthropicRequest(claudeCode(), claude);
    expect(dropped).toEqual([]);
    expect((body.system as unknown[])[1]).toEqual({
      type: 'text',
      text: 'Long agent prompt.',
      cache_control: { type: 'ephemeral' },
    });
    expect((body.tools as Record<string, unknown>[])[0].cache_control).toEqual({
      type: 'ephemeral',
      ttl: '1h',
    });
  });

  it('places default breakpoints for a Responses client on a Claude model, unless the catalog says off', () => {
    const responses = decodeResponsesRequest({
      model: 'claude',
      instructions: 'You are Codex.',
      tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' } }],
      input: [
        { role: 'user', content: 'Fix the bug.' },
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
      prompt_cache_key: 'codex-session-1',
    });
    const on = toAnthropicRequest(responses, claude);
    expect(on.dropped).toEqual([]);
    const ephemeral = { type: 'ephemeral' };
    expect((on.body.tools as Record<string, unknown>[])[0].cache_control).toEqual(ephemeral);
    expect((on.body.system as Record<string, unknown>[])[0].cache_control).toEqual(ephemeral);
    const assistant = (on.body.messages as { content: Record<string, unknown>[] }[])[1];
    expect(assistant.content[0].cache_control).toEqual(ephemeral);

    const off = toAnthropicRequest(responses, { ...claude, cacheBreakpoints: 'off' });
    expect(JSON.stringify(off.body)).not.toContain('cache_control');
    expect(off.dropped).toEqual(['prompt_cache_key']);
  });
});

describe('mid-conversation system messages', () => {
  const conversation = claudeCode({
    messages: [
      { role: 'user', content: 'List the files.' },
      { role: 'assistant', content: 'a.txt' },
      { role: 'system', content: 'The user switched to plan mode.' } as never,
      { role: 'user', content: 'Plan the change.' },
    ],
  });

  it('keeps its place on a chat upstream', () => {
    const roles = (toOpenAiChatRequest(conversation, gpt4o).body.messages as Json[]).map(
      (m) => `${String(m.role)}:${typeof m.content === 'string' ? m.content : ''}`,
    );
    expect(roles).toEqual([
      'system:You are Claude Code.',
      'system:Long agent prompt.',
      'user:List the files.',
      'assistant:a.txt',
      'system:The user switched to plan mode.',
      'user:Plan the change.',
    ]);
  });

  it('keeps its place on a Responses upstream, out of the instructions', () => {
    const { body } = toOpenAiResponsesRequest(conversation, gptResponses);
    expect(body.instructions).toBe('You are Claude Code.\n\nLong agent prompt.');
    expect((body.input as Json[]).map((i) => i.role)).toEqual([
      'user',
      'assistant',
      'system',
      'user',
    ]);
  });

  it('joins the system prompt on an Anthropic target, which has no place for it', () => {
    const { body } = toAnthropicRequest(
      chat({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'Later.' },
          { role: 'user', content: 'b' },
        ],
      }),
      claude,
    );
    expect((body.system as Json[]).map((b) => b.text)).toEqual(['Later.']);
    expect(body.messages).toHaveLength(1);
  });
});

type Json = Record<string, unknown>;
