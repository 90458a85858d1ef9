import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type Observable, finalize, mergeMap, tap } from 'rxjs';
import { ResponseCache } from '../../cache/response-cache';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { type SseFrame, writeSseWhenStarted } from '../../common/sse/sse-writer';
import { endWith } from '../../common/sse/stream-end';
import type { FlowControl } from '../../common/sse/flow-control';
import type { AllConfig } from '../../config';
import { collectResponse } from '../../core/accumulate';
import type { CanonicalEvent } from '../../core/canonical';
import {
  OutputProtections,
  type ProtectedOutput,
} from '../../policy/protections/output-protections';
import { TracingService } from '../../observability/tracing/tracing.service';
import { type Attempt, ResilienceService } from '../../resilience/resilience.service';
import { sendJson } from '../../common/http/send-json';
import { createCallContext } from '../../upstream/call-context';
import { type PassthroughResult, framesOf } from '../../upstream/provider.interface';
import { AnswerCapture, cacheTicket, replayCached } from './cached-answers';
import { type ServingPath, servingPath, startCanonical } from './canonical-path';
import type { GenerationAdapter, GenerationBody } from './generation.adapter';
import { type RequestPlan, releaseBody } from './request-plan';

/**
 * Serves an admitted generation request of any format from its frozen plan: the serving
 * path the generation guard decided, then either the fast path (the client's body forwarded, the upstream's
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
    private readonly tracing: TracingService,
    private readonly cache: ResponseCache,
    config: ConfigService<AllConfig, true>,
  ) {
    this.keepaliveMs = config.get('app', { infer: true }).sseKeepaliveMs;
    this.holdMs = config.get('upstream', { infer: true }).streamHoldMs;
  }

  /**
   * Serves the request `plan` describes and writes the answer to its response. Every attempt
   * (retries, fallbacks) derives what it sends from the plan, which nothing changes.
   * `adapter`: the plan's own, or one of the same format with services bound to it. A model
   * that opts into the response cache is answered from it when it can be.
   */
  async serve<B extends GenerationBody>(
    plan: RequestPlan<B>,
    adapter: GenerationAdapter<B> = plan.adapter,
  ): Promise<void> {
    const ticket = cacheTicket(this.cache, plan, adapter);
    let capture: AnswerCapture | undefined;
    if (ticket !== undefined && adapter.cache !== undefined) {
      if (ticket.lookup) {
        const hit = await this.cache.lookup(ticket);
        if (hit !== undefined) {
          this.outputs.replayed(plan.protections, plan.req, plan.res);
          await replayCached(plan, adapter, hit, this.keepaliveMs);
          return;
        }
      } else {
        this.cache.skipped(ticket);
      }
      plan.req.ctx.cache = 'miss';
      plan.res.setHeader('x-gateway-cache', 'miss');
      capture = new AnswerCapture(this.cache, ticket, adapter.cache, plan);
    }
    const { req, res, models, sticky } = plan;
    const ctx = createCallContext(req, res);
    if (plan.body.stream !== true) {
      const write = await this.resilience.run(
        req,
        res,
        ctx,
        models,
        (a) => this.unstreamed(adapter, plan, a, capture),
        sticky,
      );
      await write();
      return;
    }
    // Errors after the head was committed go out in the format of the attempt that failed.
    const failing: FailingAttempt = { fail: () => [] };
    const started = this.resilience.run(
      req,
      res,
      ctx,
      models,
      (a) => {
        const attempt = this.streamed(adapter, plan, a, capture);
        failing.fail = attempt.fail;
        return attempt.frames;
      },
      sticky,
    );
    // Verdicts settle once no attempt is left, never on a retried one (an error envelope
    // settles them in its filter; a head committed early needs it here). A started stream
    // lets the request body go, unless its answer is being captured for the cache.
    const frames = started.then(
      (relayed) => {
        if (capture === undefined) {
          releaseBody(req);
        }
        return relayed;
      },
      plan.route.isProtected
        ? (error: unknown) => {
            this.outputs.failed(plan.protections, req, res);
            throw error;
          }
        : undefined,
    );
    return this.write(res, frames, ctx.flow, failing, plan.route.model);
  }

  /**
   * Writes a stream whose source is starting. Its own method so that the closures the
   * writer keeps for the whole stream close over these few values, not over serve()'s
   * scope, which holds the plan and with it the request body (V8 gives all closures of one
   * function one shared context).
   */
  private write(
    res: GatewayResponse,
    frames: Promise<Observable<SseFrame>>,
    flow: FlowControl,
    failing: FailingAttempt,
    model: CatalogModel,
  ): Promise<void> {
    return writeSseWhenStarted(res, frames, {
      keepaliveMs: this.keepaliveMs,
      holdMs: this.holdMs,
      flow,
      errorFrames: (error) => failing.fail(error),
      onHeldCommit: () => this.resilience.heldHead(res, model),
    });
  }

  /**
   * One attempt of an unstreamed request, on the path its deployment takes: resolves with
   * the writer of the whole answer once it is read (nothing is sent before).
   */
  private async unstreamed<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    plan: RequestPlan<B>,
    a: Attempt,
    capture: AnswerCapture | undefined,
  ): Promise<() => void | Promise<void>> {
    const { req, res, body } = plan;
    const path = pathOf(plan, a);
    capture?.begin(a.model);
    if (path.kind === 'native') {
      const call = adapter.native(plan, a.model);
      const result = await path.provider.passthrough({
        model: a.model,
        format: adapter.format,
        answer: plan.format.answer,
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
      capture?.answeredNative(result.value);
      return () => this.sendNative(adapter, req, res, a.model, result);
    }
    const { events, output } = this.startCanonical(adapter, plan, a, path);
    const recordUsage = (event: CanonicalEvent): void => {
      if (event.type === 'message_stop') {
        req.ctx.usage = event.usage;
      }
    };
    const started = await events;
    const protectedEvents = output ? started.pipe(output.protect) : started;
    const response = await collectResponse(protectedEvents.pipe(tap(recordUsage)));
    capture?.answered(response);
    const toJson = (): unknown => adapter.toJson(response, body, a.model.id, req);
    // Encoded by the writer, after the attempt: a stored response's write (toJson's promise)
    // must not hold the deployment's slot or count against its health.
    return () => {
      const made = this.tracing.enabled
        ? this.tracing.step(req, 'gateway.encode', toJson)
        : toJson();
      return made instanceof Promise
        ? made.then((json) => sendJson(res, JSON.stringify(json)))
        : sendJson(res, JSON.stringify(made));
    };
  }

  /** One attempt of a streamed request: its frames once the upstream started, and its error frames. */
  private streamed<B extends GenerationBody>(
    adapter: GenerationAdapter<B>,
    plan: RequestPlan<B>,
    a: Attempt,
    capture: AnswerCapture | undefined,
  ): { frames: Promise<Observable<SseFrame>>; fail: (error: GatewayError) => SseFrame[] } {
    const { req, body } = plan;
    const path = pathOf(plan, a);
    capture?.begin(a.model);
    if (path.kind === 'native') {
      // The payload is left out of what the stream keeps: `fail` lives as long as it does.
      const { payload, ...call } = adapter.native(plan, a.model);
      const started = path.provider.passthrough({
        model: a.model,
        format: adapter.format,
        answer: plan.format.answer,
        body: payload,
        stream: true,
        ctx: a.ctx,
      });
      return {
        frames: started.then((answer) => {
          const relayed = call.frames(framesOf(answer));
          return capture ? relayed.pipe(tap((frame) => capture.frame(frame))) : relayed;
        }),
        fail: (error) => call.fail(error),
      };
    }
    const encoder = adapter.encoder(body, a.model.id, req);
    const { events, output } = this.startCanonical(adapter, plan, a, path);
    const frames = events.then((started) => {
      const encoded = (output ? started.pipe(output.protect) : started).pipe(
        mergeMap((event) => {
          if (event.type === 'message_stop') {
            req.ctx.usage = event.usage;
          }
          capture?.event(event);
          return encoder.encode(event);
        }),
      );
      const closed = encoder.end ? endWith(encoded, () => encoder.end?.() ?? []) : encoded;
      const ended = encoder.frames ? encoder.frames(closed) : closed;
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
    plan: RequestPlan<B>,
    a: Attempt,
    path: Extract<ServingPath, { kind: 'canonical' }>,
  ): { events: Promise<Observable<CanonicalEvent>>; output: ProtectedOutput | undefined } {
    const { req, res, body } = plan;
    const dropped = adapter.checkCanonical(
      body,
      path.model,
      plan.route.isProtected ? this.outputs.outgoingNames() : undefined,
    );
    a.ctx.droppedParams?.push(...dropped);
    const request = adapter.decode(body);
    // Scopes the prompt_cache_key a translation derives to the client's key.
    request.cacheScope = req.ctx.keyId;
    const output = this.outputs.prepare(plan.protections, req, res, request, a.model);
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
 * The serving path of one attempt: the one admission decided when the attempt runs on the
 * requested model and provider (most attempts), else the path of the fallback or other
 * deployment it runs on.
 */
function pathOf(plan: RequestPlan, a: Attempt): ServingPath {
  const { route } = plan;
  return a.model === route.model && a.provider === route.provider
    ? route.path
    : servingPath(plan.adapter.format, a.model, a.provider, route.isProtected);
}

/** The error frames of the attempt that is running: each attempt's own format. */
interface FailingAttempt {
  fail(error: GatewayError): SseFrame[];
}
