import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, finalize, mergeMap, tap } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { type SseFrame, writeSseWhenStarted } from '../../common/sse/sse-writer';
import { endWith } from '../../common/sse/stream-end';
import type { AllConfig } from '../../config';
import { collectResponse } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import {
  OutputProtections,
  type ProtectedOutput,
} from '../../policy/protections/output-protections';
import { TracingService } from '../../observability/tracing/tracing.service';
import { FallbackPlan } from '../../resilience/fallback-plan';
import { type Attempt, ResilienceService } from '../../resilience/resilience.service';
import { stickyKeyOf } from '../../resilience/sticky-key';
import { sendJson } from '../../common/http/send-json';
import { setOwn } from '../../common/own';
import { createCallContext } from '../../upstream/call-context';
import { type PassthroughResult, framesOf } from '../../upstream/provider.interface';
import { type ServingPath, routeOf, servingPath, startCanonical } from './canonical-path';
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
    private readonly resilience: ResilienceService,
    private readonly fallbacks: FallbackPlan,
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
    const { model, isProtected } = routeOf(req);
    const ctx = createCallContext(req, res);
    const models = this.fallbacks.candidates(model, req, adapter.format, takeModels(body, req));
    const sticky = stickyKeyOf(req, body);
    // Adapters rewrite top-level fields of the body they send (model id, stream options): a
    // later attempt starts again from the client's fields.
    const pristine = { ...body } as Record<string, unknown>;
    let attempts = 0;
    const fresh = (): void => {
      if (attempts++ > 0) {
        restore(body as unknown as Record<string, unknown>, pristine);
      }
    };
    if (body.stream !== true) {
      const write = await this.resilience.run(
        req,
        res,
        ctx,
        models,
        (a) => {
          fresh();
          return this.unstreamed(adapter, body, req, res, a, isProtected);
        },
        sticky,
      );
      write();
      return;
    }
    // Errors after the head was committed go out in the format of the attempt that failed.
    let fail: (error: GatewayError) => SseFrame[] = () => [];
    const started = this.resilience.run(
      req,
      res,
      ctx,
      models,
      (a) => {
        fresh();
        const started = this.streamed(adapter, body, req, res, a, isProtected);
        fail = started.fail;
        return started.frames;
      },
      sticky,
    );
    // Verdicts settle once no attempt is left, never on a retried one (an error envelope
    // settles them in its filter; a head committed early needs it here).
    const frames = isProtected
      ? started.catch((error: unknown) => {
          this.outputs.failed(req, res);
          throw error;
        })
      : started;
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow: ctx.flow,
      errorFrames: (error) => fail(error),
      onHeldCommit: () => this.resilience.heldHead(res, model),
    });
  }

  /**
   * One attempt of an unstreamed request, on the path its deployment takes: resolves with
   * the writer of the whole answer once it is read (nothing is sent before).
   */
  private async unstreamed<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
    req: GatewayRequest,
    res: GatewayResponse,
    a: Attempt,
    isProtected: boolean,
  ): Promise<() => void> {
    const path = servingPath(adapter.format, a.model, a.provider, isProtected);
    if (path.kind === 'native') {
      const call = adapter.native(body, req, a.model);
      const result = await path.provider.passthrough({
        model: a.model,
        format: adapter.format,
        body: call.payload,
        stream: false,
        ctx: a.ctx,
      });
      if (result.kind !== 'json') {
        throw new Error('an unstreamed upstream call resolved with a stream');
      }
      if (call.answered) {
        await call.answered(result.value);
      }
      return () => this.sendNative(adapter, req, res, a.model, result);
    }
    const { events, output } = this.startCanonical(adapter, body, req, res, a, path, isProtected);
    const recordUsage = (event: CanonicalEvent): void => {
      if (event.type === 'message_stop') {
        req.ctx.usage = event.usage;
      }
    };
    const started = await events;
    const protectedEvents = output ? started.pipe(output.protect) : started;
    const response = await collectResponse(protectedEvents.pipe(tap(recordUsage)));
    const toJson = (): unknown => adapter.toJson(response, body, a.model.id);
    return () =>
      sendJson(
        res,
        JSON.stringify(
          this.tracing.enabled ? this.tracing.step(req, 'gateway.encode', toJson) : toJson(),
        ),
      );
  }

  /** One attempt of a streamed request: its frames once the upstream started, and its error frames. */
  private streamed<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
    req: GatewayRequest,
    res: GatewayResponse,
    a: Attempt,
    isProtected: boolean,
  ): { frames: Promise<Observable<SseFrame>>; fail: (error: GatewayError) => SseFrame[] } {
    const path = servingPath(adapter.format, a.model, a.provider, isProtected);
    if (path.kind === 'native') {
      const call = adapter.native(body, req, a.model);
      const started = path.provider.passthrough({
        model: a.model,
        format: adapter.format,
        body: call.payload,
        stream: true,
        ctx: a.ctx,
      });
      return {
        frames: started.then((answer) => call.frames(framesOf(answer))),
        fail: (error) => call.fail(error),
      };
    }
    const encoder = adapter.encoder(body, a.model.id, req);
    const { events, output } = this.startCanonical(adapter, body, req, res, a, path, isProtected);
    const frames = events.then((started) => {
      const encoded = (output ? started.pipe(output.protect) : started).pipe(
        mergeMap((event) => {
          if (event.type === 'message_stop') {
            req.ctx.usage = event.usage;
          }
          return encoder.encode(event);
        }),
      );
      const ended = encoder.end ? endWith(encoded, () => encoder.end?.() ?? []) : encoded;
      return this.tracing.enabled ? this.traceEncoding(req, ended) : ended;
    });
    return { frames, fail: (error) => encoder.fail(error) };
  }

  /**
   * Starts the canonical path of one attempt. The outgoing protections are applied by the
   * caller once the attempt started, so that a retried attempt settles no verdict.
   */
  private startCanonical<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    body: B,
    req: GatewayRequest,
    res: GatewayResponse,
    a: Attempt,
    path: Extract<ServingPath, { kind: 'canonical' }>,
    isProtected: boolean,
  ): { events: Promise<Observable<CanonicalEvent>>; output: ProtectedOutput | undefined } {
    adapter.checkCanonical(
      body,
      path.model,
      isProtected ? this.outputs.outgoingNames() : undefined,
    );
    const request = adapter.decode(body);
    const output = this.outputs.prepare(req, res, request, a.model);
    return { events: startCanonical(path.provider, request, path.model, a.ctx, res), output };
  }

  /** Writes an unstreamed native answer, naming the catalog model that served. */
  private sendNative<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    result: Extract<PassthroughResult, { kind: 'json' }>,
  ): void {
    const answer = result.value;
    if (typeof answer.usage === 'object' && answer.usage !== null) {
      req.ctx.usage = adapter.nativeUsage(answer.usage);
    }
    if (adapter.namesModel(answer, model.id)) {
      sendJson(res, result.body);
      return;
    }
    answer.model = model.id;
    sendJson(res, JSON.stringify(answer));
  }

  /** A `gateway.encode` span over a streamed encoding, from its first event to its end. */
  private traceEncoding<T>(req: GatewayRequest, frames: Observable<T>): Observable<T> {
    let done: () => void = () => undefined;
    const over = new Promise<void>((resolve) => (done = resolve));
    void this.tracing.step(req, 'gateway.encode', () => over);
    return frames.pipe(finalize(done));
  }
}

/**
 * Takes OpenRouter's `models` array out of the body (it is the gateway's to read, not the
 * upstream's) and, when there was one, drops the raw bytes that still carry it.
 */
function takeModels(body: object, req: GatewayRequest): unknown {
  if (!('models' in body)) {
    return undefined;
  }
  const models = (body as { models?: unknown }).models;
  Reflect.deleteProperty(body, 'models');
  req.rawBody = undefined;
  return models;
}

function restore(body: Record<string, unknown>, pristine: Record<string, unknown>): void {
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(pristine, key)) {
      Reflect.deleteProperty(body, key);
    }
  }
  // Own data properties, as JSON.parse made them: Object.assign would run the
  // `__proto__` setter for a client's "__proto__" key.
  for (const [key, value] of Object.entries(pristine)) {
    setOwn(body, key, value);
  }
}
