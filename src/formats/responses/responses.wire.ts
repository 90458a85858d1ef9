import { randomBytes } from 'node:crypto';
import { openAiErrorBody } from '../../common/errors/envelopes';
import type { GatewayError } from '../../common/errors/gateway-errors';
import type { CanonicalUsage, FinishReason } from '../../core/canonical';
import type { ResponsesRequestDto } from './responses-request.dto';
import { continuationOf } from './store/continuation';

/**
 * Responses API wire objects the gateway builds itself (the local model, failure
 * events), and the small conversions shared by the encoder and the fast path.
 */

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: SummaryText[];
  encrypted_content?: string;
  status?: 'incomplete';
}

export interface MessageItem {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: OutputText[];
}

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: 'in_progress' | 'completed' | 'incomplete';
  call_id: string;
  /** The namespace tool the function belongs to, when it is one of a namespace's. */
  namespace?: string;
  name: string;
  arguments: string;
}

export type OutputItem = ReasoningItem | MessageItem | FunctionCallItem;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The `response` object: the non-streamed body and every lifecycle event's snapshot. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean;
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number;
  text: Record<string, unknown>;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number;
  truncation: string;
  usage: ResponsesUsage | null;
  metadata: Record<string, unknown>;
}

/** A stream event: its `type` is also the SSE `event:` name. */
export interface ResponsesStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

export const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/** Ids the gateway mints: `<prefix><24 hex>`, unique per call. */
export function newResponsesId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

export function toResponsesUsage(u: CanonicalUsage): ResponsesUsage {
  const inputDetails: ResponsesUsage['input_tokens_details'] = {
    cached_tokens: u.cachedInputTokens ?? 0,
  };
  if (u.cacheWriteInputTokens !== undefined) {
    inputDetails.cache_write_tokens = u.cacheWriteInputTokens;
  }
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: inputDetails,
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

interface ResponsesUsageWire {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

export function fromResponsesUsage(u: ResponsesUsageWire): CanonicalUsage {
  const usage: CanonicalUsage = {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    cachedInputTokens: u.input_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? 0,
  };
  const written = u.input_tokens_details?.cache_write_tokens;
  if (written !== undefined) {
    usage.cacheWriteInputTokens = written;
  }
  return usage;
}

/**
 * The response object before any output, echoing the request's settings the way the
 * API does (`previous_response_id` as the client sent it, also when the gateway rebuilt
 * the conversation). `store` is the request's: the gateway stores the responses it builds.
 */
export function responseShell(
  request: Partial<ResponsesRequestDto>,
  model: string,
  id: string,
  createdAt: number,
): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id:
      continuationOf(request)?.previousResponseId ?? request.previous_response_id ?? null,
    reasoning: {
      effort: request.reasoning?.effort ?? null,
      summary: request.reasoning?.summary ?? null,
    },
    store: request.store !== false,
    temperature: request.temperature ?? 1,
    text: request.text ?? { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: 'disabled',
    usage: null,
    metadata: request.metadata ?? {},
  };
}

/** The terminal snapshot for a canonical finish reason. */
export function finishedResponse(
  shell: ResponseObject,
  output: OutputItem[],
  finish: FinishReason,
  usage: CanonicalUsage,
  completedAt: number,
): ResponseObject {
  const done: ResponseObject = { ...shell, output, usage: toResponsesUsage(usage) };
  switch (finish) {
    case 'length':
      return { ...done, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    case 'content_filter':
    case 'refusal':
      return { ...done, status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    case 'error':
      return {
        ...done,
        status: 'failed',
        error: { code: 'server_error', message: 'The model stopped with an error.' },
      };
    case 'stop':
    case 'tool_calls':
    case 'pause':
      return { ...done, status: 'completed', completed_at: completedAt };
  }
}

/**
 * What a stream that fails after it started ends with: an `error` event, then
 * `response.failed` with the snapshot, continuing the sequence numbers. The error is
 * both nested (as the API sends it, and as every openai-node version reads it: a
 * top-level `error` object makes the SDK throw an APIError) and flat (the SDK's
 * ResponseErrorEvent type).
 */
export function failureEvents(
  snapshot: object,
  sequence: number,
  error: GatewayError,
  withErrorEvent = true,
): ResponsesStreamEvent[] {
  const { message, type, param, code } = openAiErrorBody(error).error;
  const failed: ResponsesStreamEvent = {
    type: 'response.failed',
    sequence_number: withErrorEvent ? sequence + 1 : sequence,
    response: {
      ...snapshot,
      status: 'failed',
      error: {
        code: error.kind === 'rate_limit' ? 'rate_limit_exceeded' : 'server_error',
        message,
      },
    },
  };
  if (!withErrorEvent) {
    return [failed];
  }
  return [
    {
      type: 'error',
      sequence_number: sequence,
      code,
      message,
      param,
      error: { type, code, message, param },
    },
    failed,
  ];
}
