import { randomUUID } from 'node:crypto';
import { own } from '../../../common/own';
import type {
  BlockKind,
  CanonicalEvent,
  CanonicalUsage,
  FinishReason,
} from '../../../core/canonical';
import type { StreamDecoder } from '../../canonical-call';
import { type Json, arr, num, obj, str } from '../../json-access';
import { streamIncomplete } from '../anthropic/from-anthropic';
import { bedrockError } from './bedrock-errors';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/**
 * Converse usage -> canonical. Like Anthropic's, Converse `inputTokens` leaves out cache
 * reads and writes; canonical input includes them.
 */
export function converseUsage(value: unknown): CanonicalUsage {
  const u = obj(value);
  const read = num(u.cacheReadInputTokens) ?? 0;
  const write = num(u.cacheWriteInputTokens) ?? 0;
  return {
    inputTokens: (num(u.inputTokens) ?? 0) + read + write,
    outputTokens: num(u.outputTokens) ?? 0,
    cachedInputTokens: read,
    cacheWriteInputTokens: write,
  };
}

/** Why a non-streamed body is not a Converse answer (undefined when it is one). */
export function missingFromConverseAnswer(value: Json): string | undefined {
  return Array.isArray(obj(obj(value.output).message).content)
    ? undefined
    : 'a Converse answer without output.message.content';
}

type Open = 'text' | 'reasoning' | 'tool_call';

/**
 * ConverseStream events -> canonical events; one instance per stream, named by the
 * event-stream `:event-type` (`messageStart`, `contentBlockStart`, `contentBlockDelta`,
 * `contentBlockStop`, `messageStop`, `metadata`). Text and reasoning blocks have no start
 * event on the wire: their first delta opens them. The answer ends with `metadata` (the
 * usage), or with the body after `messageStop`; an exception message fails the stream
 * with the status its type says. Pure, `now` injectable for golden tests.
 */
export class ConverseStreamDecoder implements StreamDecoder {
  /** Wire block index -> canonical index and kind. */
  private readonly blocks = new Map<number, { index: number; kind: Open }>();
  private started = false;
  private stopReason: string | undefined;
  private stopSequence: string | undefined;
  private stopped = false;

  constructor(
    private readonly providerName: string,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
    private readonly newId: () => string = () => `msg_bdrk_${randomUUID().replace(/-/g, '')}`,
  ) {}

  push(event: Json, name?: string): CanonicalEvent[] {
    if (event.type === 'error') {
      const error = obj(event.error);
      throw bedrockError(str(error.type), str(error.message), this.providerName);
    }
    const out = this.start();
    switch (name) {
      case 'messageStart':
        break;
      case 'contentBlockStart': {
        const toolUse = obj(obj(event.start).toolUse);
        if (str(toolUse.toolUseId) !== '') {
          const index = this.blocks.size;
          this.blocks.set(num(event.contentBlockIndex) ?? -1, { index, kind: 'tool_call' });
          out.push({
            type: 'block_start',
            index,
            block: { kind: 'tool_call', id: str(toolUse.toolUseId), name: str(toolUse.name) },
          });
        }
        break;
      }
      case 'contentBlockDelta':
        out.push(...this.delta(num(event.contentBlockIndex) ?? -1, obj(event.delta)));
        break;
      case 'contentBlockStop': {
        const block = this.blocks.get(num(event.contentBlockIndex) ?? -1);
        if (block !== undefined) {
          out.push({ type: 'block_stop', index: block.index });
        }
        break;
      }
      case 'messageStop':
        this.stopReason = str(event.stopReason, 'end_turn');
        this.stopSequence =
          str(obj(event.additionalModelResponseFields).stop_sequence) || undefined;
        break;
      case 'metadata':
        out.push(...this.stop(converseUsage(event.usage)));
        break;
      case undefined:
      default:
        // Event types newer than this translator carry nothing canonical.
        break;
    }
    return out;
  }

  /** The body ended: after `messageStop` the answer is whole (usage unknown), else cut short. */
  end(): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    if (this.stopReason === undefined) {
      throw streamIncomplete();
    }
    return [...this.start(), ...this.stop({ inputTokens: 0, outputTokens: 0 })];
  }

  private start(): CanonicalEvent[] {
    if (this.started) {
      return [];
    }
    this.started = true;
    return [{ type: 'message_start', id: this.newId(), model: '', created: this.now() }];
  }

  private stop(usage: CanonicalUsage): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    this.stopped = true;
    const finishReason =
      (this.stopReason === undefined ? undefined : own(FINISH, this.stopReason)) ?? 'stop';
    const event: CanonicalEvent = { type: 'message_stop', finishReason, usage };
    if (this.stopReason === 'stop_sequence' && this.stopSequence !== undefined) {
      event.stopSequence = this.stopSequence;
    }
    return [event];
  }

  /** The canonical index of wire block `wire`, opening it as `kind` on its first delta. */
  private open(
    wire: number,
    kind: 'text' | 'reasoning',
    out: CanonicalEvent[],
    redacted = false,
  ): number {
    const known = this.blocks.get(wire);
    if (known !== undefined) {
      return known.index;
    }
    const index = this.blocks.size;
    this.blocks.set(wire, { index, kind });
    const block: BlockKind =
      kind === 'text' ? { kind } : redacted ? { kind, redacted } : { kind: 'reasoning' };
    out.push({ type: 'block_start', index, block });
    return index;
  }

  private delta(wire: number, delta: Json): CanonicalEvent[] {
    const out: CanonicalEvent[] = [];
    if (typeof delta.text === 'string') {
      const index = this.open(wire, 'text', out);
      if (delta.text !== '') {
        out.push({ type: 'text_delta', index, text: delta.text });
      }
      return out;
    }
    if (delta.toolUse !== undefined) {
      const block = this.blocks.get(wire);
      const json = str(obj(delta.toolUse).input);
      if (block?.kind === 'tool_call' && json !== '') {
        out.push({ type: 'tool_arguments_delta', index: block.index, json });
      }
      return out;
    }
    if (delta.reasoningContent !== undefined) {
      const reasoning = obj(delta.reasoningContent);
      if (typeof reasoning.redactedContent === 'string') {
        const index = this.open(wire, 'reasoning', out, true);
        out.push({ type: 'reasoning_encrypted', index, data: reasoning.redactedContent });
        return out;
      }
      const index = this.open(wire, 'reasoning', out);
      if (typeof reasoning.text === 'string' && reasoning.text !== '') {
        out.push({ type: 'reasoning_delta', index, text: reasoning.text });
      }
      if (typeof reasoning.signature === 'string' && reasoning.signature !== '') {
        out.push({ type: 'reasoning_signature', index, signature: reasoning.signature });
      }
    }
    return out;
  }
}

/**
 * A whole Converse answer as the canonical events it adds up to (through the stream
 * decoder, so both paths agree on every block).
 */
export function fromConverseResponse(
  body: Json,
  providerName: string,
  now?: () => number,
  newId?: () => string,
): CanonicalEvent[] {
  const decoder = new ConverseStreamDecoder(providerName, now, newId);
  const events = decoder.push({ role: 'assistant' }, 'messageStart');
  arr(obj(obj(body.output).message).content).forEach((block, wire) => {
    const at = { contentBlockIndex: wire };
    if (block.toolUse !== undefined) {
      const toolUse = obj(block.toolUse);
      const input = toolUse.input ?? {};
      events.push(
        ...decoder.push({ ...at, start: { toolUse } }, 'contentBlockStart'),
        ...decoder.push(
          { ...at, delta: { toolUse: { input: JSON.stringify(input) } } },
          'contentBlockDelta',
        ),
      );
    } else if (typeof block.text === 'string') {
      events.push(...decoder.push({ ...at, delta: { text: block.text } }, 'contentBlockDelta'));
    } else if (block.reasoningContent !== undefined) {
      const reasoning = obj(block.reasoningContent);
      const text = obj(reasoning.reasoningText);
      const delta =
        typeof reasoning.redactedContent === 'string'
          ? { redactedContent: reasoning.redactedContent }
          : { text: str(text.text), signature: str(text.signature) };
      events.push(
        ...decoder.push({ ...at, delta: { reasoningContent: delta } }, 'contentBlockDelta'),
      );
    } else {
      return;
    }
    events.push(...decoder.push(at, 'contentBlockStop'));
  });
  decoder.push(
    {
      stopReason: body.stopReason,
      additionalModelResponseFields: body.additionalModelResponseFields,
    },
    'messageStop',
  );
  events.push(...decoder.push({ usage: body.usage }, 'metadata'));
  return events;
}
