import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, mergeMap, tap } from 'rxjs';
import { CatalogService } from '../../catalog/catalog.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { type SseFrame, writeSseWhenStarted } from '../../common/sse/sse-writer';
import { endWith } from '../../common/sse/stream-end';
import type { AllConfig } from '../../config';
import { collectResponse } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import { createCallContext } from '../../upstream/call-context';
import {
  type CallContext,
  type RelayingProvider,
  framesOf,
} from '../../upstream/provider.interface';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { OutputProtections } from '../../policy/protections/output-protections';
import { rejectHostedTools, routeGeneration, startCanonical } from '../shared/canonical-path';
import type { ResponsesRequestDto } from './responses-request.dto';
import { decodeResponsesRequest } from './responses.decoder';
import { ResponsesStreamEncoder, toResponseObject } from './responses.encoder';
import { ResponsesRelay } from './responses.passthrough';
import {
  type ResponsesStreamEvent,
  fromResponsesUsage,
  newResponsesId,
  responseShell,
} from './responses.wire';

const toFrame = (event: ResponsesStreamEvent): SseFrame => ({
  event: event.type,
  data: JSON.stringify(event),
});

/**
 * Conversation state a stateless model cannot resolve: only a provider that stored the
 * earlier response can. Rejected rather than silently dropped.
 */
function checkStateless(
  body: ResponsesRequestDto,
  model: CatalogModel,
  protectedBy: string | undefined,
): void {
  const hint = protectedBy
    ? `With ${protectedBy} the gateway must see the whole conversation; send the earlier items in 'input' instead.`
    : `The model '${model.id}' keeps no conversation state; send the earlier items in 'input' instead.`;
  for (const field of ['previous_response_id', 'conversation'] as const) {
    if (body[field] !== undefined && body[field] !== null) {
      throw new InvalidRequestError(`'${field}' is not supported here. ${hint}`, field);
    }
  }
  if (Array.isArray(body.input)) {
    const at = body.input.findIndex((item) => item.type === 'item_reference');
    if (at >= 0) {
      throw new InvalidRequestError(
        `Item references are not supported here. ${hint}`,
        `input[${at}]`,
      );
    }
  }
}

/** Serves POST /v1/responses: routing, the fast path and the canonical path. */
@Injectable()
export class ResponsesService {
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

  async create(
    body: ResponsesRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void> {
    const { model, path, isProtected } = routeGeneration(
      this.catalog,
      this.providers,
      this.outputs,
      'responses',
      body,
      req,
    );
    if (path.kind === 'native') {
      return this.passthrough(body, req, res, model, path.provider, createCallContext(req, res));
    }
    const protectedBy = isProtected ? this.outputs.outgoingNames() : undefined;
    checkStateless(body, model, protectedBy);
    rejectHostedTools(body.tools, (t) => t.type === 'function', path.model, protectedBy);
    const ctx = createCallContext(req, res);
    const request = decodeResponsesRequest(body);
    const output = this.outputs.prepare(req, res, request, model);
    const events = startCanonical(path.provider, request, path.model, ctx, res, output);
    return this.viaCanonical(body, req, res, model, events, ctx);
  }

  /** Same-format fast path: forward the client's body, relay the upstream's events. */
  private async passthrough(
    body: ResponsesRequestDto,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    provider: RelayingProvider,
    ctx: CallContext,
  ): Promise<void> {
    let payload: string | Buffer;
    if (model.upstreamId === body.model && req.rawBody) {
      payload = req.rawBody;
    } else {
      body.model = model.upstreamId;
      payload = JSON.stringify(body);
    }
    const stream = body.stream === true;
    const started = provider.passthrough({
      model,
      format: 'responses',
      body: payload,
      stream,
      ctx,
    });

    const result = stream ? undefined : await started;
    if (result?.kind === 'json') {
      const parsed = result.value;
      if (typeof parsed.usage === 'object' && parsed.usage !== null) {
        req.ctx.usage = fromResponsesUsage(parsed.usage);
      }
      // The upstream's bytes as they are when there is no other model id to rewrite.
      if (typeof parsed.model !== 'string' || parsed.model === model.id) {
        res.status(200).type('application/json').send(result.body);
        return;
      }
      parsed.model = model.id;
      res.status(200).type('application/json').send(JSON.stringify(parsed));
      return;
    }

    const relay = new ResponsesRelay(
      model.id,
      () => responseShell(body, model.id, newResponsesId('resp_'), Math.floor(Date.now() / 1000)),
      (usage) => (req.ctx.usage = usage),
    );
    const frames = started.then((answer) =>
      endWith(framesOf(answer).pipe(mergeMap((frame) => relay.relay(frame))), () => relay.end()),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => relay.fail(error),
    });
  }

  /** Canonical path: a canonical event source encoded as the Responses API. */
  private async viaCanonical(
    body: ResponsesRequestDto,
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
    const options = { model: model.id, request: body };
    if (body.stream !== true) {
      const response = await collectResponse((await started).pipe(tap(recordUsage)));
      res.status(200).json(toResponseObject(response, options));
      return;
    }
    const encoder = new ResponsesStreamEncoder(options);
    const frames = started.then((events) =>
      endWith(
        events.pipe(
          mergeMap((event) => {
            recordUsage(event);
            return encoder.encode(event).map(toFrame);
          }),
        ),
        () => encoder.end().map(toFrame),
      ),
    );
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => encoder.fail(error).map(toFrame),
    });
  }
}
