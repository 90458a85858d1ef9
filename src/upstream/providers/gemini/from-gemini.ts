import { randomUUID } from 'node:crypto';
import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-errors';
import { own } from '../../../common/own';
import type { CanonicalEvent, CanonicalUsage, FinishReason } from '../../../core/canonical';
import type { StreamDecoder } from '../../canonical-call';
import { type Json, arr, num, obj, str } from '../../json-access';
import { toGeminiSignature } from './gemini.wire';

/** Gemini finish reasons; every safety stop is `content_filter`. */
const FINISH: Record<string, FinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'error',
};

/** Gemini `usageMetadata` -> canonical: output includes thoughts, input cached tokens. */
export function geminiUsage(value: unknown): CanonicalUsage {
  const u = obj(value);
  const thoughts = num(u.thoughtsTokenCount) ?? 0;
  return {
    inputTokens: (num(u.promptTokenCount) ?? 0) + (num(u.toolUsePromptTokenCount) ?? 0),
    outputTokens: (num(u.candidatesTokenCount) ?? 0) + thoughts,
    cachedInputTokens: num(u.cachedContentTokenCount) ?? 0,
    reasoningTokens: thoughts,
  };
}

/** An error object of the API (`{code, message, status}`) as a typed error. */
export function geminiError(value: unknown): GatewayError {
  const error = obj(value);
  const message = str(error.message, 'The upstream stream failed.');
  switch (str(error.status)) {
    case 'RESOURCE_EXHAUSTED':
      return new UpstreamHttpError(429, 'rate_limit', message, { code: 'rate_limit_exceeded' });
    case 'INVALID_ARGUMENT':
    case 'FAILED_PRECONDITION':
      return new UpstreamHttpError(400, 'invalid_request', message);
    case 'UNAVAILABLE':
      return new UpstreamHttpError(503, 'overloaded', message, { code: 'upstream_overloaded' });
    default:
      return new UpstreamHttpError(502, 'server', message, { code: 'upstream_error' });
  }
}

const incomplete = (): GatewayError =>
  new GatewayError(502, 'server', 'The upstream stream ended before the message completed.', {
    code: 'stream_incomplete',
  });

/** Why a non-streamed body is not a `generateContent` answer (undefined when it is one). */
export function missingFromGeminiAnswer(value: Json): string | undefined {
  return Array.isArray(value.candidates) || typeof value.promptFeedback === 'object'
    ? undefined
    : 'a generateContent answer without candidates';
}

/**
 * `generateContent` answer chunks -> canonical events; one instance per answer. A
 * non-streamed answer is one chunk. Thought parts become a reasoning block, text parts a
 * text block, each function call a tool call block (Gemini gives no ids: made up here); a
 * thought signature becomes the reasoning block's signature, ahead of the call it signs.
 * The answer ends with the chunk that has a finish reason (or a blocked prompt).
 */
export class GeminiStreamDecoder implements StreamDecoder {
  private started = false;
  private next = 0;
  private open: { index: number; kind: 'text' | 'reasoning' } | undefined;
  private finish: FinishReason | undefined;
  private sawCall = false;
  private usage: CanonicalUsage = { inputTokens: 0, outputTokens: 0 };
  private stopped = false;

  push(chunk: Json): CanonicalEvent[] {
    if (chunk.error !== undefined) {
      throw geminiError(chunk.error);
    }
    const out: CanonicalEvent[] = [];
    if (chunk.usageMetadata !== undefined) {
      this.usage = geminiUsage(chunk.usageMetadata);
    }
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'message_start',
        id: str(chunk.responseId) || `gen-${randomUUID()}`,
        model: str(chunk.modelVersion),
        created: Math.floor(Date.now() / 1000),
        inputTokens: this.usage.inputTokens,
      });
    }
    const candidate = arr(chunk.candidates)[0];
    if (candidate === undefined) {
      if (typeof obj(chunk.promptFeedback).blockReason === 'string') {
        this.finish = 'content_filter';
      }
      return out;
    }
    for (const part of arr(obj(candidate.content).parts)) {
      this.part(part, out);
    }
    const reason = str(candidate.finishReason);
    if (reason !== '' && reason !== 'FINISH_REASON_UNSPECIFIED') {
      this.finish = own(FINISH, reason) ?? 'stop';
    }
    return out;
  }

  end(): CanonicalEvent[] {
    if (this.stopped) {
      return [];
    }
    if (this.finish === undefined) {
      throw incomplete();
    }
    this.stopped = true;
    const out = this.close();
    const finishReason = this.finish === 'stop' && this.sawCall ? 'tool_calls' : this.finish;
    out.push({ type: 'message_stop', finishReason, usage: this.usage });
    return out;
  }

  private part(part: Json, out: CanonicalEvent[]): void {
    const signature = str(part.thoughtSignature);
    if (part.functionCall !== undefined) {
      if (signature !== '') {
        // Onto the thought summary it closes, or a reasoning block of its own.
        const index = this.openBlock('reasoning', out);
        out.push({ type: 'reasoning_signature', index, signature: toGeminiSignature(signature) });
      }
      out.push(...this.close());
      const call = obj(part.functionCall);
      const index = this.next++;
      const id = str(call.id) || `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      this.sawCall = true;
      out.push(
        { type: 'block_start', index, block: { kind: 'tool_call', id, name: str(call.name) } },
        { type: 'tool_arguments_delta', index, json: JSON.stringify(call.args ?? {}) },
        { type: 'block_stop', index },
      );
      return;
    }
    if (typeof part.text !== 'string') {
      return;
    }
    if (part.thought === true) {
      const index = this.openBlock('reasoning', out);
      if (part.text !== '') {
        out.push({ type: 'reasoning_delta', index, text: part.text });
      }
      if (signature !== '') {
        out.push({ type: 'reasoning_signature', index, signature: toGeminiSignature(signature) });
      }
      return;
    }
    if (part.text !== '') {
      const index = this.openBlock('text', out);
      out.push({ type: 'text_delta', index, text: part.text });
    }
  }

  /** The index of an open block of `kind`, opening one (and closing another) as needed. */
  private openBlock(kind: 'text' | 'reasoning', out: CanonicalEvent[]): number {
    if (this.open?.kind === kind) {
      return this.open.index;
    }
    out.push(...this.close());
    const index = this.next++;
    this.open = { index, kind };
    out.push({ type: 'block_start', index, block: { kind } });
    return index;
  }

  private close(): CanonicalEvent[] {
    if (this.open === undefined) {
      return [];
    }
    const { index } = this.open;
    this.open = undefined;
    return [{ type: 'block_stop', index }];
  }
}

/** A non-streamed `generateContent` answer as canonical events. */
export function fromGeminiResponse(body: Json): CanonicalEvent[] {
  const decoder = new GeminiStreamDecoder();
  return [...decoder.push(body), ...decoder.end()];
}
