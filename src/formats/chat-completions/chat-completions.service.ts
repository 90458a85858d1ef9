import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, lastValueFrom, mergeMap, reduce } from 'rxjs';
import { CatalogService } from '../../catalog/catalog.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import { openAiErrorBody } from '../../common/errors/envelopes';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { type SseFrame, writeSseWhenStarted } from '../../common/sse/sse-writer';
import type { AllConfig } from '../../config';
import { ResponseAccumulator } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import { createCallContext } from '../../upstream/call-context';
import {
  type CallContext,
  type RelayingProvider,
  framesOf,
} from '../../upstream/provider.interface';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { rejectHostedTools, routeGeneration, startCanonical } from '../shared/canonical-path';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { decodeChatRequest } from './chat.decoder';
import { ChatChunkEncoder, toChatCompletion } from './chat.encoder';
import { fromChatUsage, relayChatFrames, spliceIncludeUsage } from './chat.passthrough';
import { CHAT_ONLY_REJECTS } from '../../upstream/translate-params';
import { OutputProtections } from '../../policy/protections/output-protections';
import { own } from '../../common/own';

const DONE: SseFrame = { data: '[DONE]' };

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

/** Serves POST /v1/chat/completions: routing, the fast path and the canonical path. */
@Injectable()
export class ChatCompletionsService {
  private readonly keepaliveMs: number;
  private readonly holdMs: number;

  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    private readonly outputs: OutputProtections,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
    this.holdMs = config.get('upstream', { infer: true }).streamHoldMs;
  }

  async handle(
    body: ChatCompletionRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void> {
    const { model, path, isProtected } = routeGeneration(
      this.catalog,
      this.providers,
      this.outputs,
      'chat_completions',
      body,
      req,
    );
    const ctx = createCallContext(req, res);
    if (path.kind === 'native') {
      return this.passthrough(body, req, res, model, path.provider, ctx);
    }
    const protectedBy = isProtected ? this.outputs.outgoingNames() : undefined;
    rejectHostedTools(body.tools, (t) => t.type === 'function', path.model, protectedBy);
    if (protectedBy !== undefined) {
      rejectUnprotectable(body, protectedBy);
    }
    const request = decodeChatRequest(body);
    const output = this.outputs.prepare(req, res, request, model);
    const events = startCanonical(path.provider, request, path.model, ctx, res, output);
    return this.viaCanonical(body, req, res, model, events, ctx);
  }

  /** Same-format fast path: forward the client's body, relay the upstream's bytes. */
  private async passthrough(
    body: ChatCompletionRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    provider: RelayingProvider,
    ctx: CallContext,
  ): Promise<void> {
    const stream = body.stream === true;
    // Ask for usage even when the client did not, for accounting; strip it on the way back.
    const addUsage = stream && body.stream_options?.include_usage !== true;
    const sameModel = model.upstreamId === body.model;
    let payload: string | Buffer | undefined;
    if (sameModel && req.rawBody) {
      if (!addUsage) {
        payload = req.rawBody;
      } else if (body.stream_options === undefined) {
        // Most streamed traffic: splice the one key in rather than re-serialize the body.
        payload = spliceIncludeUsage(req.rawBody);
      }
    }
    if (payload === undefined) {
      body.model = model.upstreamId;
      if (addUsage) {
        body.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
      }
      payload = JSON.stringify(body);
    }
    const started = provider.passthrough({
      model,
      format: 'chat_completions',
      body: payload,
      stream,
      ctx,
    });

    const result = stream ? undefined : await started;
    if (result?.kind === 'json') {
      const completion = result.value;
      if (typeof completion.usage === 'object' && completion.usage !== null) {
        req.ctx.usage = fromChatUsage(completion.usage);
      }
      // The upstream's bytes as they are when they already carry the catalog id.
      if (completion.model === model.id) {
        res.status(200).type('application/json').send(result.body);
        return;
      }
      completion.model = model.id;
      res.status(200).type('application/json').send(JSON.stringify(completion));
      return;
    }

    const frames = started.then((answer) =>
      relayChatFrames(framesOf(answer), {
        modelId: model.id,
        sameModelId: model.id === model.upstreamId,
        stripUsageChunk: addUsage,
        onUsage: (usage) => (req.ctx.usage = usage),
      }),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => [{ data: JSON.stringify(openAiErrorBody(error)) }],
    });
  }

  /** Canonical path: a canonical event source encoded as chat completions. */
  private async viaCanonical(
    body: ChatCompletionRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    started: Promise<Observable<CanonicalEvent>>,
    ctx: CallContext,
  ): Promise<void> {
    const recordUsage = (event: CanonicalEvent): void => {
      if (event.type === 'message_stop') {
        req.ctx.usage = event.usage;
      }
    };
    if (body.stream !== true) {
      const accumulator = await lastValueFrom(
        (await started).pipe(
          reduce((acc, event) => {
            recordUsage(event);
            acc.push(event);
            return acc;
          }, new ResponseAccumulator()),
        ),
      );
      res.status(200).json(toChatCompletion(accumulator.result(), model.id));
      return;
    }
    const encoder = new ChatChunkEncoder(model.id, body.stream_options?.include_usage === true);
    const frames = started.then((events) =>
      events.pipe(
        mergeMap((event) => {
          recordUsage(event);
          return encoder.encode(event).map((chunk): SseFrame => ({ data: JSON.stringify(chunk) }));
        }),
      ),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      endFrames: [DONE],
      errorFrames: (error) => [{ data: JSON.stringify(openAiErrorBody(error)) }],
    });
  }
}
