import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, finalize, mergeMap, tap } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { writeSseWhenStarted } from '../../common/sse/sse-writer';
import { endWith } from '../../common/sse/stream-end';
import type { AllConfig } from '../../config';
import { collectResponse } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import { TracingService } from '../../observability/tracing/tracing.service';
import { OutputProtections } from '../../policy/protections/output-protections';
import { createCallContext } from '../../upstream/call-context';
import {
  type CallContext,
  type RelayingProvider,
  framesOf,
} from '../../upstream/provider.interface';
import { routeOf, startCanonical } from './canonical-path';
import type { GenerationAdapter, GenerationBody } from './generation.adapter';

/**
 * Serves an admitted generation request of any format: the serving path the generation
 * guard decided, then either the fast path (the client's body forwarded, the upstream's
 * frames relayed) or the canonical path (decode, provider, outgoing protections, encoder),
 * unstreamed as JSON or streamed as SSE. The format's adapter supplies every format-specific
 * piece.
 */
@Injectable()
export class GenerationPipeline {
  private readonly keepaliveMs: number;
  private readonly holdMs: number;

  constructor(
    private readonly outputs: OutputProtections,
    private readonly tracing: TracingService,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
    this.holdMs = config.get('upstream', { infer: true }).streamHoldMs;
  }

  /** Serves `body` (validated by the guard) and writes the answer to `res`. */
  async serve<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
    req: GatewayRequest,
    res: GatewayResponse,
  ): Promise<void> {
    const { model, path, isProtected } = routeOf(req);
    const ctx = createCallContext(req, res);
    if (path.kind === 'native') {
      return this.relay(adapter, body, req, res, model, path.provider, ctx);
    }
    adapter.checkCanonical(
      body,
      path.model,
      isProtected ? this.outputs.outgoingNames() : undefined,
    );
    const request = adapter.decode(body);
    const output = this.outputs.prepare(req, res, request, model);
    const events = startCanonical(path.provider, request, path.model, ctx, res, output);
    return this.encode(adapter, body, req, res, model, events, ctx);
  }

  /** Fast path: forward the client's body, relay the upstream's bytes. */
  private async relay<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    provider: RelayingProvider,
    ctx: CallContext,
  ): Promise<void> {
    const stream = body.stream === true;
    const call = adapter.native(body, req, model);
    const started = provider.passthrough({
      model,
      format: adapter.format,
      body: call.payload,
      stream,
      ctx,
    });

    const result = stream ? undefined : await started;
    if (result?.kind === 'json') {
      const answer = result.value;
      if (typeof answer.usage === 'object' && answer.usage !== null) {
        req.ctx.usage = adapter.nativeUsage(answer.usage);
      }
      if (adapter.namesModel(answer, model.id)) {
        res.status(200).type('application/json').send(result.body);
        return;
      }
      answer.model = model.id;
      res.status(200).type('application/json').send(JSON.stringify(answer));
      return;
    }
    return writeSseWhenStarted(
      res,
      started.then((answer) => call.frames(framesOf(answer))),
      {
        keepaliveMs: this.keepaliveMs,
        holdMs: this.holdMs,
        flow: ctx.flow,
        errorFrames: (error) => call.fail(error),
      },
    );
  }

  /** Canonical path: a canonical event source encoded in the client's format. */
  private async encode<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
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
      const response = await collectResponse((await started).pipe(tap(recordUsage)));
      const toJson = (): unknown => adapter.toJson(response, body, model.id);
      res
        .status(200)
        .json(this.tracing.enabled ? this.tracing.step(req, 'gateway.encode', toJson) : toJson());
      return;
    }
    const encoder = adapter.encoder(body, model.id, req);
    const frames = started.then((events) => {
      const encoded = events.pipe(
        mergeMap((event) => {
          recordUsage(event);
          return encoder.encode(event);
        }),
      );
      const ended = encoder.end ? endWith(encoded, () => encoder.end?.() ?? []) : encoded;
      return this.tracing.enabled ? this.traceEncoding(req, ended) : ended;
    });
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => encoder.fail(error),
    });
  }

  /** A `gateway.encode` span over a streamed encoding, from its first event to its end. */
  private traceEncoding<T>(req: GatewayRequest, frames: Observable<T>): Observable<T> {
    let done: () => void = () => undefined;
    const over = new Promise<void>((resolve) => (done = resolve));
    void this.tracing.step(req, 'gateway.encode', () => over);
    return frames.pipe(finalize(done));
  }
}
