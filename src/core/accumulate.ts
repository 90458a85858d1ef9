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
