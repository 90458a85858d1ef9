import { thinkingSignature } from '../../core/reasoning-carrier';
import type {
  CanonicalEvent,
  CanonicalResponse,
  CanonicalUsage,
  FinishReason,
} from '../../core/canonical';

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

const FINISH: Record<FinishReason, ChatFinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  refusal: 'content_filter',
  pause: 'stop',
  error: 'stop',
};

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** Canonical usage as chat's; cache writes (Anthropic's) only when there were some. */
export function toChatUsage(u: CanonicalUsage): ChatUsage {
  const written = u.cacheWriteInputTokens ?? 0;
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details:
      written > 0
        ? { cached_tokens: u.cachedInputTokens ?? 0, cache_write_tokens: written }
        : { cached_tokens: u.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
  };
}

/**
 * Signed reasoning on chat (the convention of LiteLLM and the clients built on it):
 * Anthropic-shaped blocks whose signature restores the reasoning upstream next turn.
 */
export type ChatThinkingBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

interface ReasoningState {
  text: string;
  signature?: string;
  encrypted?: string;
  itemId?: string;
  redacted?: boolean;
}

/** The thinking block for a reasoning block, when it carries something to send back. */
export function chatThinkingBlock(r: ReasoningState): ChatThinkingBlock | undefined {
  if (r.redacted) {
    return r.encrypted === undefined ? undefined : { type: 'redacted_thinking', data: r.encrypted };
  }
  const signature = thinkingSignature(r);
  return signature === '' ? undefined : { type: 'thinking', thinking: r.text, signature };
}

export interface ChatChunkDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string;
  thinking_blocks?: ChatThinkingBlock[];
  tool_calls?: {
    index: number;
    id?: string;
    type?: 'function';
    function: { name?: string; arguments: string };
  }[];
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: ChatChunkDelta;
    logprobs: null;
    finish_reason: ChatFinishReason | null;
  }[];
  usage?: ChatUsage | null;
}

export function chatCompletionId(canonicalId: string): string {
  return canonicalId.startsWith('chatcmpl-') ? canonicalId : `chatcmpl-${canonicalId}`;
}

/**
 * Canonical events -> `chat.completion.chunk` objects, in the grammar the
 * ChatCompletionStream helper requires: role on the first delta, tool-call indexes
 * contiguous from 0 with id/type/name on the first fragment, a non-null finish_reason
 * last, and the usage chunk (same id, `choices: []`) only when it was asked for.
 * One instance per stream.
 */
export class ChatChunkEncoder {
  private id = '';
  private created = 0;
  private model: string;
  /** Canonical block index -> tool-call index within the message. */
  private readonly toolIndex = new Map<number, number>();
  /** Reasoning blocks in progress, by canonical index. */
  private readonly reasoning = new Map<number, ReasoningState>();

  constructor(
    model: string,
    private readonly includeUsage: boolean,
  ) {
    this.model = model;
  }

  encode(event: CanonicalEvent): ChatChunk[] {
    switch (event.type) {
      case 'message_start':
        this.id = chatCompletionId(event.id);
        this.created = event.created;
        return [this.chunk({ role: 'assistant', content: '' })];
      case 'block_start':
        if (event.block.kind === 'reasoning') {
          this.reasoning.set(event.index, { text: '', redacted: event.block.redacted });
        }
        if (event.block.kind !== 'tool_call') {
          return [];
        }
        this.toolIndex.set(event.index, this.toolIndex.size);
        return [
          this.chunk({
            tool_calls: [
              {
                index: this.toolIndex.size - 1,
                id: event.block.id,
                type: 'function',
                function: { name: event.block.name, arguments: '' },
              },
            ],
          }),
        ];
      case 'text_delta':
        return [this.chunk({ content: event.text })];
      case 'reasoning_delta': {
        const state = this.reasoning.get(event.index);
        if (state) {
          state.text += event.text;
        }
        return [this.chunk({ reasoning_content: event.text })];
      }
      case 'tool_arguments_delta':
        return [
          this.chunk({
            tool_calls: [
              { index: this.toolIndex.get(event.index) ?? 0, function: { arguments: event.json } },
            ],
          }),
        ];
      case 'reasoning_signature': {
        const state = this.reasoning.get(event.index);
        if (state) {
          state.signature = event.signature;
        }
        return [];
      }
      case 'reasoning_encrypted': {
        const state = this.reasoning.get(event.index);
        if (state) {
          state.encrypted = event.data;
          state.itemId = event.itemId;
        }
        return [];
      }
      case 'block_stop': {
        const state = this.reasoning.get(event.index);
        this.reasoning.delete(event.index);
        const block = state && chatThinkingBlock(state);
        // The whole block in one delta, once its signature is known.
        return block ? [this.chunk({ thinking_blocks: [block] })] : [];
      }
      case 'message_stop': {
        const last = this.chunk({}, FINISH[event.finishReason]);
        if (!this.includeUsage) {
          return [last];
        }
        return [
          last,
          {
            id: this.id,
            object: 'chat.completion.chunk',
            created: this.created,
            model: this.model,
            choices: [],
            usage: toChatUsage(event.usage),
          },
        ];
      }
    }
  }

  private chunk(delta: ChatChunkDelta, finish: ChatFinishReason | null = null): ChatChunk {
    const chunk: ChatChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (this.includeUsage) {
      chunk.usage = null;
    }
    return chunk;
  }
}

/** A whole canonical response as a `chat.completion` object. */
export function toChatCompletion(r: CanonicalResponse, model: string): Record<string, unknown> {
  let text = '';
  let reasoning = '';
  const thinkingBlocks: ChatThinkingBlock[] = [];
  const toolCalls: {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[] = [];
  for (const block of r.content) {
    if (block.type === 'text') {
      text += block.text;
    } else if (block.type === 'reasoning') {
      reasoning += block.text;
      const thinking = chatThinkingBlock(block);
      if (thinking) {
        thinkingBlocks.push(thinking);
      }
    } else {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.arguments },
      });
    }
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
    annotations: [],
  };
  if (reasoning !== '') {
    message.reasoning_content = reasoning;
  }
  if (thinkingBlocks.length > 0) {
    message.thinking_blocks = thinkingBlocks;
  }
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls;
  }
  return {
    id: chatCompletionId(r.id),
    object: 'chat.completion',
    created: r.created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[r.finishReason] }],
    usage: toChatUsage(r.usage),
  };
}
