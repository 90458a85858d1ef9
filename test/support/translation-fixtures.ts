import type { Reply } from './fake-upstream';
import { writeCatalog } from './gateway';

/**
 * Upstream answers for the translation matrix, one scripted answer rendered in each
 * upstream API (Anthropic Messages, OpenAI Responses, Chat Completions), streamed or not.
 */

export type UpstreamBlock =
  | { type: 'reasoning'; text: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool'; id: string; name: string; args: string };

export type UpstreamKind = 'anthropic' | 'responses' | 'chat';

/** What each upstream reports, and what it adds up to (OpenAI convention). */
export const UPSTREAM_USAGE = {
  anthropic: {
    wire: {
      input_tokens: 20,
      cache_creation_input_tokens: 3,
      cache_read_input_tokens: 5,
      output_tokens: 30,
    },
    input: 28,
    cached: 5,
    output: 30,
  },
  responses: {
    wire: {
      input_tokens: 84,
      input_tokens_details: { cached_tokens: 16 },
      output_tokens: 94,
      output_tokens_details: { reasoning_tokens: 64 },
      total_tokens: 178,
    },
    input: 84,
    cached: 16,
    output: 94,
  },
  chat: {
    wire: {
      prompt_tokens: 40,
      completion_tokens: 12,
      total_tokens: 52,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 4 },
    },
    input: 40,
    cached: 8,
    output: 12,
  },
} as const;

/** A catalog reaching every upstream kind from every endpoint that accepts it. */
export function translationCatalog(url: string): string {
  return writeCatalog(`
providers:
  - { name: fake-anthropic, kind: anthropic, base_url: ${url}, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-openai, kind: openai, base_url: ${url}/v1, api_key_env: TEST_UPSTREAM_KEY }
  - { name: fake-vllm, kind: openai-compatible, base_url: ${url}/vllm/v1 }
models:
  - { id: claude-t, upstream_id: claude-upstream-1, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: gpt-pro-t, upstream_id: gpt-pro-upstream, provider: fake-openai, family: openai, upstream_api: responses, context_window: 400000, max_output_tokens: 128000, pricing: { input: 15, output: 120 }, capabilities: { reasoning: true, tools: true } }
  - { id: gpt-chat-t, upstream_id: gpt-chat-upstream, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { reasoning: false, tools: true } }
  - { id: vllm-t, upstream_id: vllm-upstream, provider: fake-vllm, family: openai, context_window: 32000, max_output_tokens: 4096, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

const named = (events: Record<string, unknown>[]) =>
  events.map((e) => ({ event: e.type as string, data: e }));

export function anthropicReply(blocks: UpstreamBlock[], stream: boolean): Reply {
  const usage = UPSTREAM_USAGE.anthropic.wire;
  const stop = blocks.some((b) => b.type === 'tool') ? 'tool_use' : 'end_turn';
  const content = blocks.map((b) =>
    b.type === 'reasoning'
      ? { type: 'thinking', thinking: b.text, signature: b.signature }
      : b.type === 'text'
        ? { type: 'text', text: b.text }
        : { type: 'tool_use', id: b.id, name: b.name, input: JSON.parse(b.args) as object },
  );
  if (!stream) {
    return {
      json: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'claude-upstream-1',
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      },
    };
  }
  const events: Record<string, unknown>[] = [
    {
      type: 'message_start',
      message: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'claude-upstream-1',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
  ];
  blocks.forEach((b, index) => {
    const delta = (d: object) => ({ type: 'content_block_delta', index, delta: d });
    if (b.type === 'reasoning') {
      events.push(
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        },
        delta({ type: 'thinking_delta', thinking: b.text.slice(0, 4) }),
        delta({ type: 'thinking_delta', thinking: b.text.slice(4) }),
        delta({ type: 'signature_delta', signature: b.signature }),
      );
    } else if (b.type === 'text') {
      events.push(
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
        { type: 'ping' },
        delta({ type: 'text_delta', text: b.text.slice(0, 3) }),
        delta({ type: 'text_delta', text: b.text.slice(3) }),
      );
    } else {
      events.push(
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        },
        delta({ type: 'input_json_delta', partial_json: '' }),
        delta({ type: 'input_json_delta', partial_json: b.args.slice(0, 5) }),
        delta({ type: 'input_json_delta', partial_json: b.args.slice(5) }),
      );
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
    { type: 'message_stop' },
  );
  return { sse: named(events) };
}

export function responsesReply(blocks: UpstreamBlock[], stream: boolean): Reply {
  const items = blocks.map((b, i) =>
    b.type === 'reasoning'
      ? {
          id: `rs_up_${i}`,
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: b.text }],
          encrypted_content: b.signature,
        }
      : b.type === 'text'
        ? {
            id: `msg_up_${i}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: b.text, annotations: [], logprobs: [] }],
          }
        : {
            id: `fc_up_${i}`,
            type: 'function_call',
            status: 'completed',
            call_id: b.id,
            name: b.name,
            arguments: b.args,
          },
  );
  const shell = {
    id: 'resp_up',
    object: 'response',
    created_at: 1741290958,
    model: 'gpt-pro-upstream',
    output: [] as object[],
    usage: null as object | null,
    status: 'in_progress',
  };
  const final = {
    ...shell,
    status: 'completed',
    output: items,
    usage: UPSTREAM_USAGE.responses.wire,
  };
  if (!stream) {
    return { json: final };
  }
  const events: Record<string, unknown>[] = [];
  const push = (type: string, payload: object) =>
    events.push({ type, sequence_number: events.length, ...payload });
  push('response.created', { response: shell });
  push('response.in_progress', { response: shell });
  items.forEach((item, i) => {
    const b = blocks[i];
    const ref = { item_id: item.id, output_index: i };
    if (b.type === 'reasoning') {
      push('response.output_item.added', {
        output_index: i,
        item: { id: item.id, type: 'reasoning', summary: [] },
      });
      push('response.reasoning_summary_part.added', {
        ...ref,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      push('response.reasoning_summary_text.delta', { ...ref, summary_index: 0, delta: b.text });
      push('response.reasoning_summary_text.done', { ...ref, summary_index: 0, text: b.text });
      push('response.reasoning_summary_part.done', {
        ...ref,
        summary_index: 0,
        part: { type: 'summary_text', text: b.text },
      });
    } else if (b.type === 'text') {
      push('response.output_item.added', {
        output_index: i,
        item: { ...item, status: 'in_progress', content: [] },
      });
      push('response.content_part.added', {
        ...ref,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      push('response.output_text.delta', {
        ...ref,
        content_index: 0,
        delta: b.text.slice(0, 3),
        obfuscation: 'x',
      });
      push('response.output_text.delta', { ...ref, content_index: 0, delta: b.text.slice(3) });
      push('response.output_text.done', { ...ref, content_index: 0, text: b.text });
      push('response.content_part.done', {
        ...ref,
        content_index: 0,
        part: { type: 'output_text', text: b.text, annotations: [] },
      });
    } else {
      push('response.output_item.added', {
        output_index: i,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      push('response.function_call_arguments.delta', { ...ref, delta: b.args.slice(0, 5) });
      push('response.function_call_arguments.delta', { ...ref, delta: b.args.slice(5) });
      push('response.function_call_arguments.done', { ...ref, arguments: b.args });
    }
    push('response.output_item.done', { output_index: i, item });
  });
  push('response.completed', { response: final });
  return { sse: named(events) };
}

export function chatReply(blocks: UpstreamBlock[], stream: boolean): Reply {
  const tools = blocks.filter(
    (b): b is Extract<UpstreamBlock, { type: 'tool' }> => b.type === 'tool',
  );
  const reasoning = blocks.find((b) => b.type === 'reasoning');
  const text = blocks.find((b) => b.type === 'text');
  const finish = tools.length > 0 ? 'tool_calls' : 'stop';
  const base = { id: 'chatcmpl-up', created: 1741569952, model: 'vllm-upstream' };
  if (!stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: text?.text ?? null };
    if (reasoning) {
      message.reasoning_content = reasoning.text;
    }
    if (tools.length > 0) {
      message.tool_calls = tools.map((t) => ({
        id: t.id,
        type: 'function',
        function: { name: t.name, arguments: t.args },
      }));
    }
    return {
      json: {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
        usage: UPSTREAM_USAGE.chat.wire,
      },
    };
  }
  const chunk = (delta: object, finishReason: string | null = null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
  const events: (object | string)[] = [chunk({ role: 'assistant', content: '' })];
  if (reasoning) {
    events.push(
      chunk({ reasoning_content: reasoning.text.slice(0, 4) }),
      chunk({ reasoning_content: reasoning.text.slice(4) }),
    );
  }
  if (text) {
    events.push(chunk({ content: text.text.slice(0, 3) }), chunk({ content: text.text.slice(3) }));
  }
  tools.forEach((t, index) => {
    events.push(
      chunk({
        tool_calls: [
          { index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } },
        ],
      }),
      chunk({ tool_calls: [{ index, function: { arguments: t.args.slice(0, 5) } }] }),
      chunk({ tool_calls: [{ index, function: { arguments: t.args.slice(5) } }] }),
    );
  });
  events.push(chunk({}, finish), {
    ...base,
    object: 'chat.completion.chunk',
    choices: [],
    usage: UPSTREAM_USAGE.chat.wire,
  });
  events.push('[DONE]');
  return { sse: events };
}

export const REPLIES: Record<UpstreamKind, (blocks: UpstreamBlock[], stream: boolean) => Reply> = {
  anthropic: anthropicReply,
  responses: responsesReply,
  chat: chatReply,
};

export const UPSTREAM_PATHS: Record<UpstreamKind, string> = {
  anthropic: '/v1/messages',
  responses: '/v1/responses',
  chat: '/vllm/v1/chat/completions',
};

type Json = Record<string, any>;

/**
 * Throws when a translated request misses what the provider's API requires (the subset
 * of its OpenAPI schema the gateway is responsible for).
 */
export function checkUpstreamRequest(kind: UpstreamKind, body: Json, stream: boolean): void {
  const fail = (why: string): never => {
    throw new Error(`${kind} request: ${why}\n${JSON.stringify(body, null, 1)}`);
  };
  if (typeof body.model !== 'string' || body.model === '') {
    fail('model is required');
  }
  if ((body.stream === true) !== stream) {
    fail(`stream must be ${stream}`);
  }
  switch (kind) {
    case 'anthropic': {
      if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
        fail('max_tokens is required');
      }
      const messages = body.messages as Json[];
      if (!Array.isArray(messages) || messages.length === 0 || messages[0].role !== 'user') {
        fail('messages must start with a user turn');
      }
      messages.forEach((m, i) => {
        if (i > 0 && messages[i - 1].role === m.role) {
          fail(`turns ${i - 1} and ${i} have the same role`);
        }
        const content = m.content as Json[];
        if (
          !Array.isArray(content) ||
          content.length === 0 ||
          content.some((b) => typeof b.type !== 'string')
        ) {
          fail(`messages[${i}].content must be typed blocks`);
        }
        const results = content.filter((b) => b.type === 'tool_result').length;
        if (content.slice(0, results).some((b) => b.type !== 'tool_result')) {
          fail(`messages[${i}]: tool_result blocks must come first`);
        }
      });
      if (body.thinking) {
        if (!(
          body.thinking.budget_tokens >= 1024 && body.thinking.budget_tokens < body.max_tokens
        )) {
          fail('thinking budget must be >= 1024 and below max_tokens');
        }
        if (body.temperature !== undefined && body.temperature !== 1) {
          fail('thinking allows only temperature 1');
        }
      }
      break;
    }
    case 'responses':
      if (!Array.isArray(body.input)) {
        fail('input must be an array of items');
      }
      for (const item of body.input as Json[]) {
        if (item.type === undefined && item.role === undefined) {
          fail('each input item needs a type or a role');
        }
      }
      if (body.store !== false) {
        fail('store must be false (stateless)');
      }
      if ('messages' in body || 'max_tokens' in body) {
        fail('chat fields in a Responses request');
      }
      break;
    case 'chat': {
      const messages = body.messages as Json[];
      if (!Array.isArray(messages) || messages.length === 0) {
        fail('messages is required');
      }
      messages.forEach((m, i) => {
        if (m.role === 'tool') {
          const prior = messages
            .slice(0, i)
            .reverse()
            .find((p) => p.role !== 'tool');
          if (!prior?.tool_calls?.some((c: Json) => c.id === m.tool_call_id)) {
            fail(`messages[${i}]: a tool message must follow the assistant call ${m.tool_call_id}`);
          }
        }
      });
      if (stream && body.stream_options?.include_usage !== true) {
        fail('a stream must ask for the usage chunk');
      }
      break;
    }
  }
}
