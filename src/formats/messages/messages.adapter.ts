import { anthropicErrorBody } from '../../common/errors/envelopes';
import { GatewayError } from '../../common/errors/gateway-errors';
import { own } from '../../common/own';
import type { GatewayRequest } from '../../common/request-context';
import type { SseFrame } from '../../common/sse/sse-writer';
import {
  AnthropicStreamDecoder,
  fromAnthropicMessage,
} from '../../upstream/providers/anthropic/from-anthropic';
import { dropHostedTools } from '../shared/canonical-path';
import type { GenerationAdapter } from '../shared/generation.adapter';
import { upstreamPayload } from '../shared/request-plan';
import type { MessagesRequestDto } from './messages-request.dto';
import { validateMessagesRequest } from './messages-request.validation';
import { decodeMessagesRequest } from './messages.decoder';
import { MessagesEventEncoder, toAnthropicMessage } from './messages.encoder';
import { messagesLimitFacts } from './messages.limits';
import { fromAnthropicUsage, relayMessagesFrames } from './messages.passthrough';
import { messagesProtections } from './messages.protections';
import { messagesSystemPrompt } from './messages.system-prompt';

/**
 * A message thread (`thread`, sent by the Anthropic SDK's thread and tool-runner helpers)
 * is a conversation Anthropic holds between turns: each later turn sends only its new
 * messages. Only Anthropic's own API can continue one; anywhere else the history (and the
 * system prompt, which the thread keeps) would be silently lost, so it is a 400. Its
 * `details` are those of Anthropic's own `thread_unsupported_request`, on which the SDK
 * drops the thread and sends the full history, so the default tool runner works anyway.
 */
function rejectThread(thread: unknown): void {
  if (thread !== undefined && thread !== null) {
    throw new GatewayError(
      400,
      'invalid_request',
      'Message threads are held only by Anthropic-served models (this request is translated or protected): send the full history without "thread" (toolRunner: thread: false).',
      {
        param: 'thread',
        code: 'thread_unsupported_request',
        details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] },
      },
    );
  }
}

/** A failure after the stream started: Anthropic's `event: error`. */
function errorFrames(error: GatewayError, req: GatewayRequest): SseFrame[] {
  return [{ event: 'error', data: JSON.stringify(anthropicErrorBody(error, req.ctx.requestId)) }];
}

/** POST /v1/messages as the generation pipeline serves it. */
export const messagesAdapter: GenerationAdapter<MessagesRequestDto> = {
  format: 'messages',
  validate: validateMessagesRequest,
  systemPrompt: messagesSystemPrompt,
  limits: messagesLimitFacts,
  protections: messagesProtections,

  checkCanonical(body, model, protectedBy) {
    rejectThread(body.thread);
    const choice = body.tool_choice as { type?: unknown; name?: unknown } | undefined;
    return dropHostedTools(body.tools, (t) => t.type === undefined || t.type === 'custom', model, {
      protectedBy,
      forced: (t) => choice?.type === 'tool' && choice.name === t.name,
    });
  },

  decode: decodeMessagesRequest,

  toJson: (response, _body, modelId) => toAnthropicMessage(response, modelId),

  encoder(_body, modelId, req) {
    const encoder = new MessagesEventEncoder(modelId);
    return {
      encode: (event) =>
        encoder.encode(event).map((e) => ({ event: e.type, data: JSON.stringify(e) })),
      fail: (error) => errorFrames(error, req),
    };
  },

  native(plan, model) {
    const { req } = plan;
    return {
      payload: upstreamPayload(plan, model.upstreamId),
      frames: (upstream) =>
        relayMessagesFrames(upstream, model.id, (usage) => {
          req.ctx.usage = usage;
        }),
      fail: (error) => errorFrames(error, req),
    };
  },

  nativeUsage: fromAnthropicUsage,
  namesModel: (answer, modelId) => answer.model === modelId,

  cache: {
    json: (answer) => fromAnthropicMessage(answer),
    stream: () => new AnthropicStreamDecoder(),
    // Remote MCP servers and code-execution containers answer with blocks of their own
    // (and a container's state moves on), which the stored answer does not keep.
    replayable: (body) =>
      !SERVER_SIDE.some((f) => own(body, f) !== undefined && own(body, f) !== null),
  },
};

const SERVER_SIDE = ['mcp_servers', 'container'] as const;
