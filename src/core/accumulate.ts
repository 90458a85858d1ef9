import { type Observable, lastValueFrom, reduce } from 'rxjs';
import type { CanonicalEvent, CanonicalResponse, OutputBlock } from './canonical';

/**
 * Adds up a canonical event stream into the whole response, the way an SDK helper would.
 * Used for non-streaming requests served by a stream-only source (the local model, or a
 * translated upstream stream).
 */
export class ResponseAccumulator {
  private response: CanonicalResponse | undefined;
  private readonly blocks: OutputBlock[] = [];

  push(event: CanonicalEvent): void {
    switch (event.type) {
      case 'message_start':
        this.response = {
          id: event.id,
          model: event.model,
          created: event.created,
          content: this.blocks,
          finishReason: 'stop',
          usage: { inputTokens: event.inputTokens ?? 0, outputTokens: 0 },
        };
        return;
      case 'block_start':
        this.blocks[event.index] =
          event.block.kind === 'tool_call'
            ? { type: 'tool_call', id: event.block.id, name: event.block.name, arguments: '' }
            : event.block.kind === 'text'
              ? { type: 'text', text: '' }
              : event.block.redacted
                ? { type: 'reasoning', text: '', redacted: true }
                : { type: 'reasoning', text: '' };
        return;
      case 'text_delta':
      case 'reasoning_delta': {
        const block = this.blocks[event.index];
        if (block && block.type !== 'tool_call') {
          block.text += event.text;
        }
        return;
      }
      case 'reasoning_signature': {
        const block = this.blocks[event.index];
        if (block?.type === 'reasoning') {
          block.signature = event.signature;
        }
        return;
      }
      case 'reasoning_encrypted': {
        const block = this.blocks[event.index];
        if (block?.type === 'reasoning') {
          block.encrypted = event.data;
          if (event.itemId !== undefined) {
            block.itemId = event.itemId;
          }
        }
        return;
      }
      case 'tool_arguments_delta': {
        const block = this.blocks[event.index];
        if (block?.type === 'tool_call') {
          block.arguments += event.json;
        }
        return;
      }
      case 'block_stop':
        return;
      case 'message_stop':
        if (this.response) {
          this.response.finishReason = event.finishReason;
          this.response.usage = event.usage;
          if (event.stopSequence !== undefined) {
            this.response.stopSequence = event.stopSequence;
          }
        }
        return;
    }
  }

  /** The finished response; throws when the stream never started. */
  result(): CanonicalResponse {
    if (!this.response) {
      throw new Error('stream ended without a message_start event');
    }
    return this.response;
  }
}

/** Runs a canonical event stream to its end and returns what it adds up to. */
export async function collectResponse(
  events: Observable<CanonicalEvent>,
): Promise<CanonicalResponse> {
  const accumulator = await lastValueFrom(
    events.pipe(
      reduce((acc, event) => {
        acc.push(event);
        return acc;
      }, new ResponseAccumulator()),
    ),
  );
  return accumulator.result();
}

/**
 * A whole response as the canonical events that add up to it (the inverse of
 * {@link ResponseAccumulator}): one delta per block. Replays a stored answer as a stream.
 */
export function responseEvents(response: CanonicalResponse): CanonicalEvent[] {
  const events: CanonicalEvent[] = [
    {
      type: 'message_start',
      id: response.id,
      model: response.model,
      created: response.created,
      inputTokens: response.usage.inputTokens,
    },
  ];
  response.content.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        events.push({ type: 'block_start', index, block: { kind: 'text' } });
        if (block.text !== '') {
          events.push({ type: 'text_delta', index, text: block.text });
        }
        break;
      case 'reasoning':
        events.push({
          type: 'block_start',
          index,
          block: block.redacted ? { kind: 'reasoning', redacted: true } : { kind: 'reasoning' },
        });
        if (block.text !== '') {
          events.push({ type: 'reasoning_delta', index, text: block.text });
        }
        if (block.signature !== undefined) {
          events.push({ type: 'reasoning_signature', index, signature: block.signature });
        }
        if (block.encrypted !== undefined) {
          events.push({
            type: 'reasoning_encrypted',
            index,
            data: block.encrypted,
            ...(block.itemId !== undefined ? { itemId: block.itemId } : {}),
          });
        }
        break;
      case 'tool_call':
        events.push({
          type: 'block_start',
          index,
          block: { kind: 'tool_call', id: block.id, name: block.name },
        });
        if (block.arguments !== '') {
          events.push({ type: 'tool_arguments_delta', index, json: block.arguments });
        }
        break;
    }
    events.push({ type: 'block_stop', index });
  });
  events.push({
    type: 'message_stop',
    finishReason: response.finishReason,
    usage: response.usage,
    ...(response.stopSequence !== undefined ? { stopSequence: response.stopSequence } : {}),
  });
  return events;
}
