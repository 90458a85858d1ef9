import { thinkingSignature } from '../../core/reasoning-carrier';
import { toolInput } from '../../core/tool-arguments';
import type {
  BlockKind,
  CanonicalEvent,
  CanonicalResponse,
  CanonicalUsage,
  FinishReason,
  OutputBlock,
} from '../../core/canonical';

export type AnthropicStopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

const STOP_REASONS: Record<FinishReason, AnthropicStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  refusal: 'refusal',
  pause: 'pause_turn',
  error: 'end_turn',
};

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** Canonical usage counts cached input inside `inputTokens`; Anthropic reports it apart. */
export function toAnthropicUsage(u: CanonicalUsage): AnthropicUsage {
  const cacheRead = u.cachedInputTokens ?? 0;
  const cacheWrite = u.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: Math.max(u.inputTokens - cacheRead - cacheWrite, 0),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: u.outputTokens,
  };
}

export function stopFields(
  finishReason: FinishReason,
  stopSequence: string | undefined,
): { stop_reason: AnthropicStopReason; stop_sequence: string | null } {
  return stopSequence !== undefined && finishReason === 'stop'
    ? { stop_reason: 'stop_sequence', stop_sequence: stopSequence }
    : { stop_reason: STOP_REASONS[finishReason], stop_sequence: null };
}

export function messageId(canonicalId: string): string {
  return canonicalId.startsWith('msg_') ? canonicalId : `msg_${canonicalId}`;
}

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export type AnthropicDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

export type MessagesStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' };

function startBlock(block: BlockKind): AnthropicContentBlock {
  switch (block.kind) {
    case 'text':
      return { type: 'text', text: '' };
    case 'reasoning':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'tool_call':
      return { type: 'tool_use', id: block.id, name: block.name, input: {} };
  }
}

/**
 * Canonical events -> Messages stream events, in the grammar `MessageStream` requires
 * (wire-formats.md 4.6/4.7): `message_start` with `content: []` and usage; block indexes
 * contiguous from 0 in start order; thinking blocks starting with `thinking: ""` and
 * `signature: ""`, their signature sent as `signature_delta` just before the block's
 * `content_block_stop`; tool_use starting with `input: {}` then `input_json_delta`s;
 * `message_delta` with the stop reason and cumulative usage; `message_stop`.
 * Sources must not interleave blocks (the local model and upstream streams do not).
 * One instance per stream.
 */
export class MessagesEventEncoder {
  /** Canonical block index -> wire index. */
  private readonly indexes = new Map<number, number>();
  /** Signatures held back until their block stops. */
  private readonly signatures = new Map<number, string>();
  /** Redacted blocks start once their data is known (it is part of the start event). */
  private readonly pendingRedacted = new Set<number>();

  constructor(private readonly model: string) {}

  encode(event: CanonicalEvent): MessagesStreamEvent[] {
    switch (event.type) {
      case 'message_start':
        return [
          {
            type: 'message_start',
            message: {
              id: messageId(event.id),
              type: 'message',
              role: 'assistant',
              model: this.model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: toAnthropicUsage({ inputTokens: event.inputTokens ?? 0, outputTokens: 0 }),
            },
          },
        ];
      case 'block_start': {
        if (event.block.kind === 'reasoning' && event.block.redacted) {
          this.pendingRedacted.add(event.index);
          return [];
        }
        const index = this.indexes.size;
        this.indexes.set(event.index, index);
        return [{ type: 'content_block_start', index, content_block: startBlock(event.block) }];
      }
      case 'text_delta':
        return [this.delta(event.index, { type: 'text_delta', text: event.text })];
      case 'reasoning_delta':
        return [this.delta(event.index, { type: 'thinking_delta', thinking: event.text })];
      case 'reasoning_signature':
        this.signatures.set(event.index, event.signature);
        return [];
      case 'reasoning_encrypted': {
        if (this.pendingRedacted.delete(event.index)) {
          const index = this.indexes.size;
          this.indexes.set(event.index, index);
          return [
            {
              type: 'content_block_start',
              index,
              content_block: { type: 'redacted_thinking', data: event.data },
            },
          ];
        }
        // An OpenAI reasoning payload travels in the thinking block's signature.
        this.signatures.set(
          event.index,
          thinkingSignature({ encrypted: event.data, itemId: event.itemId }),
        );
        return [];
      }
      case 'tool_arguments_delta':
        return [this.delta(event.index, { type: 'input_json_delta', partial_json: event.json })];
      case 'block_stop': {
        if (this.pendingRedacted.delete(event.index)) {
          // A redacted block without data has nothing to show.
          return [];
        }
        const out: MessagesStreamEvent[] = [];
        const signature = this.signatures.get(event.index);
        if (signature !== undefined) {
          out.push(this.delta(event.index, { type: 'signature_delta', signature }));
        }
        out.push({ type: 'content_block_stop', index: this.wireIndex(event.index) });
        return out;
      }
      case 'message_stop':
        return [
          {
            type: 'message_delta',
            delta: stopFields(event.finishReason, event.stopSequence),
            usage: toAnthropicUsage(event.usage),
          },
          { type: 'message_stop' },
        ];
    }
  }

  private wireIndex(canonical: number): number {
    return this.indexes.get(canonical) ?? canonical;
  }

  private delta(canonical: number, delta: AnthropicDelta): MessagesStreamEvent {
    return { type: 'content_block_delta', index: this.wireIndex(canonical), delta };
  }
}

function outputBlock(block: OutputBlock): AnthropicContentBlock | undefined {
  switch (block.type) {
    case 'text':
      // Anthropic omits `citations` when there are none; `@ai-sdk/anthropic` rejects a null.
      return { type: 'text', text: block.text };
    case 'reasoning':
      if (block.redacted) {
        // As in the stream: a redacted block without data has nothing to send back.
        return block.encrypted === undefined
          ? undefined
          : { type: 'redacted_thinking', data: block.encrypted };
      }
      return { type: 'thinking', thinking: block.text, signature: thinkingSignature(block) };
    case 'tool_call':
      return {
        type: 'tool_use',
        id: block.id,
        name: block.name,
        input: toolInput(block.arguments),
      };
  }
}

/** A whole canonical response as a Messages `message` object. */
export function toAnthropicMessage(r: CanonicalResponse, model: string): AnthropicMessage {
  return {
    id: messageId(r.id),
    type: 'message',
    role: 'assistant',
    model,
    content: r.content.map(outputBlock).filter((b): b is AnthropicContentBlock => b !== undefined),
    ...stopFields(r.finishReason, r.stopSequence),
    usage: toAnthropicUsage(r.usage),
  };
}
