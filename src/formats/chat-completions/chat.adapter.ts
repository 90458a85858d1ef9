import { openAiErrorBody } from '../../common/errors/envelopes';
import { type GatewayError, InvalidRequestError } from '../../common/errors/gateway-errors';
import { own } from '../../common/own';
import type { SseFrame } from '../../common/sse/sse-writer';
import {
  ChatStreamDecoder,
  fromChatCompletion,
} from '../../upstream/providers/openai/from-openai-chat';
import { CHAT_ONLY_REJECTS } from '../../upstream/translate-params';
import { dropHostedTools } from '../shared/canonical-path';
import type { GenerationAdapter } from '../shared/generation.adapter';
import { upstreamPayload } from '../shared/request-plan';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { validateChatRequest } from './chat-request.validation';
import { decodeChatRequest } from './chat.decoder';
import { ChatChunkEncoder, toChatCompletion } from './chat.encoder';
import { chatLimitFacts } from './chat.limits';
import { fromChatUsage, relayChatFrames, spliceIncludeUsage } from './chat.passthrough';
import { chatProtections } from './chat.protections';
import { chatSystemPrompt } from './chat.system-prompt';

const DONE: SseFrame = { data: '[DONE]' };

const errorFrames = (error: GatewayError): SseFrame[] => [
  { data: JSON.stringify(openAiErrorBody(error)) },
];

/**
 * Chat fields the canonical answer cannot carry (several choices, token logprobs, audio,
 * legacy function calling). Outgoing protections read the answer on the canonical path, so
 * with them these are a 400 rather than silently dropped.
 */
function rejectUnprotectable(body: ChatCompletionRequestDto, protectedBy: string): void {
  const fields = body as unknown as Record<string, unknown>;
  const unsupported = [
    // Absent, null and false ask for nothing (as in the translators' extra policies).
    ...Object.entries(CHAT_ONLY_REJECTS)
      .filter(([key, rejects]) => {
        const value = own(fields, key);
        return value !== undefined && value !== null && value !== false && rejects(value);
      })
      .map(([key]) => key),
    ...(fields.functions !== undefined && fields.functions !== null ? ['functions'] : []),
  ];
  if (unsupported.length > 0) {
    throw new InvalidRequestError(
      `'${unsupported[0]}' cannot be combined with ${protectedBy}, which read the answer as one choice of text and tool calls${unsupported[0] === 'functions' ? "; send the functions as 'tools'" : ''}.`,
      unsupported[0],
      'unsupported_parameter',
    );
  }
}

/** POST /v1/chat/completions as the generation pipeline serves it. */
export const chatAdapter: GenerationAdapter<ChatCompletionRequestDto> = {
  format: 'chat_completions',
  validate: validateChatRequest,
  systemPrompt: chatSystemPrompt,
  limits: chatLimitFacts,
  protections: chatProtections,

  checkCanonical(body, model, protectedBy) {
    const choice = body.tool_choice as { type?: unknown; custom?: { name?: unknown } } | undefined;
    const dropped = dropHostedTools(body.tools, (t) => t.type === 'function', model, {
      protectedBy,
      forced: (t) =>
        typeof choice === 'object' &&
        choice?.type === t.type &&
        choice.custom?.name === (t.custom as { name?: unknown } | undefined)?.name,
    });
    if (protectedBy !== undefined) {
      rejectUnprotectable(body, protectedBy);
    }
    return dropped;
  },

  decode: decodeChatRequest,

  toJson: (response, _body, modelId) => toChatCompletion(response, modelId),

  encoder(body, modelId) {
    const encoder = new ChatChunkEncoder(modelId, body.stream_options?.include_usage === true);
    return {
      encode: (event) => encoder.encode(event).map((chunk) => ({ data: JSON.stringify(chunk) })),
      end: () => [DONE],
      fail: errorFrames,
    };
  },

  native(plan, model) {
    const { body, req } = plan;
    const stream = body.stream === true;
    // Ask for usage even when the client did not, for accounting; strip it on the way back.
    const addUsage = stream && body.stream_options?.include_usage !== true;
    // Most streamed traffic: splice the one key into the client's bytes rather than
    // re-serialize the body.
    const spliced =
      addUsage && body.stream_options === undefined && model.upstreamId === body.model && plan.raw
        ? spliceIncludeUsage(plan.raw)
        : undefined;
    const payload =
      spliced ??
      upstreamPayload(
        plan,
        model.upstreamId,
        addUsage
          ? { stream_options: { ...(body.stream_options ?? {}), include_usage: true } }
          : undefined,
      );
    return {
      payload,
      frames: (upstream) =>
        relayChatFrames(upstream, {
          modelId: model.id,
          sameModelId: model.id === model.upstreamId,
          stripUsageChunk: addUsage,
          onUsage: (usage) => (req.ctx.usage = usage),
        }),
      fail: errorFrames,
    };
  },

  nativeUsage: fromChatUsage,
  namesModel: (answer, modelId) => answer.model === modelId,

  cache: { json: fromChatCompletion, stream: () => new ChatStreamDecoder() },
};
