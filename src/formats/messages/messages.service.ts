import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, mergeMap } from 'rxjs';
import { CatalogService } from '../../catalog/catalog.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import { anthropicErrorBody } from '../../common/errors/envelopes';
import { GatewayError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { type SseFrame, writeSseWhenStarted } from '../../common/sse/sse-writer';
import type { AllConfig } from '../../config';
import { collectResponse } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import { createCallContext } from '../../upstream/call-context';
import {
  type CallContext,
  type RelayingProvider,
  type UpstreamProvider,
  framesOf,
} from '../../upstream/provider.interface';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { messagesProtections } from './messages.protections';
import { OutputProtections } from '../../policy/protections/output-protections';
import { stripProtectionTools } from '../../policy/protections/protection-facts';
import { ProtectionRegistry } from '../../policy/protections/protection-registry';
import {
  rejectHostedTools,
  resolveModel,
  routeGeneration,
  startCanonical,
} from '../shared/canonical-path';
import type { CountTokensRequestDto, MessagesRequestDto } from './messages-request.dto';
import { decodeMessagesRequest } from './messages.decoder';
import { MessagesEventEncoder, toAnthropicMessage } from './messages.encoder';
import { fromAnthropicUsage, relayMessagesFrames } from './messages.passthrough';
import { messagesLimitFacts } from './messages.limits';
import { estimatePromptTokens } from '../../limits/tokens/token-estimator';

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

/** Serves POST /v1/messages and /v1/messages/count_tokens: routing, fast path, canonical path. */
@Injectable()
export class MessagesService {
  private readonly keepaliveMs: number;
  private readonly holdMs: number;

  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    private readonly outputs: OutputProtections,
    private readonly protections: ProtectionRegistry,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
    this.holdMs = config.get('upstream', { infer: true }).streamHoldMs;
  }

  async handle(body: MessagesRequestDto, req: GatewayRequest, res: GatewayResponse): Promise<void> {
    const { model, path, isProtected } = routeGeneration(
      this.catalog,
      this.providers,
      this.outputs,
      'messages',
      body,
      req,
    );
    const ctx = createCallContext(req, res);
    if (path.kind === 'native') {
      return this.passthrough(body, req, res, model, path.provider, ctx);
    }
    rejectThread(body.thread);
    rejectHostedTools(
      body.tools,
      (t) => t.type === undefined || t.type === 'custom',
      path.model,
      isProtected ? this.outputs.outgoingNames() : undefined,
    );
    const request = decodeMessagesRequest(body);
    const output = this.outputs.prepare(req, res, request, model);
    const events = startCanonical(path.provider, request, path.model, ctx, res, output);
    return this.viaCanonical(body, req, res, model, events, ctx);
  }

  /**
   * A provider that counts exactly (Anthropic) is asked; for every other model the
   * answer is the same bounded tokenizer estimate the request limits use
   * (src/limits/tokens/token-estimator.ts).
   */
  async countTokens(
    body: CountTokensRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<unknown> {
    const { model, provider } = this.route(body.model, req);
    // Protection tools never reach the model, so they count no tokens.
    if (stripProtectionTools(body, messagesProtections.tools(body, this.protections.toolNames()))) {
      req.rawBody = undefined;
    }
    if (provider.countTokens) {
      return provider.countTokens(this.upstreamBody(body, req, model), createCallContext(req, res));
    }
    return { input_tokens: estimatePromptTokens(messagesLimitFacts(body), model.family) };
  }

  private route(
    id: string,
    req: GatewayRequest,
  ): { model: CatalogModel; provider: UpstreamProvider } {
    return resolveModel(this.catalog, this.providers, 'messages', id, req);
  }

  /** The client's own bytes when no rewrite is needed, else its body with the upstream id. */
  private upstreamBody(
    body: CountTokensRequestDto,
    req: GatewayRequest,
    model: CatalogModel,
  ): string | Buffer {
    if (model.upstreamId === body.model && req.rawBody) {
      return req.rawBody;
    }
    body.model = model.upstreamId;
    return JSON.stringify(body);
  }

  /** Same-format fast path: forward the client's body, relay the upstream's events. */
  private async passthrough(
    body: MessagesRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    provider: RelayingProvider,
    ctx: CallContext,
  ): Promise<void> {
    const stream = body.stream === true;
    const started = provider.passthrough({
      model,
      format: 'messages',
      body: this.upstreamBody(body, req, model),
      stream,
      ctx,
    });

    const result = stream ? undefined : await started;
    if (result?.kind === 'json') {
      const message = result.value;
      if (typeof message.usage === 'object' && message.usage !== null) {
        req.ctx.usage = fromAnthropicUsage(message.usage);
      }
      // The upstream's bytes as they are when they already carry the catalog id.
      if (message.model === model.id) {
        res.status(200).type('application/json').send(result.body);
        return;
      }
      message.model = model.id;
      res.status(200).type('application/json').send(JSON.stringify(message));
      return;
    }
    const frames = started.then((answer) =>
      relayMessagesFrames(framesOf(answer), model.id, (usage) => {
        req.ctx.usage = usage;
      }),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => this.errorFrames(error, req),
    });
  }

  /** Canonical path: a canonical event source encoded as Messages. */
  private async viaCanonical(
    body: MessagesRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    started: Promise<Observable<CanonicalEvent>>,
    ctx: CallContext,
  ): Promise<void> {
    if (body.stream !== true) {
      const response = await collectResponse(await started);
      req.ctx.usage = response.usage;
      res.status(200).json(toAnthropicMessage(response, model.id));
      return;
    }
    const encoder = new MessagesEventEncoder(model.id);
    const frames = started.then((events) =>
      events.pipe(
        mergeMap((event) => {
          if (event.type === 'message_stop') {
            req.ctx.usage = event.usage;
          }
          return encoder
            .encode(event)
            .map((e): SseFrame => ({ event: e.type, data: JSON.stringify(e) }));
        }),
      ),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => this.errorFrames(error, req),
    });
  }

  /** A failure after the stream started: Anthropic's `event: error`. */
  private errorFrames(error: GatewayError, req: GatewayRequest): SseFrame[] {
    return [{ event: 'error', data: JSON.stringify(anthropicErrorBody(error, req.ctx.requestId)) }];
  }
}
