import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Observable } from 'rxjs';
import type { StreamFraming } from '../catalog/provider-kind';
import type { SseFrame } from '../common/sse/sse-writer';
import type { AllConfig } from '../config';
import { AgentPool } from './agent-pool';
import { callTimeoutsOf } from './call-timeouts';
import type { CallContext, PassthroughResult } from './provider.interface';
import { Redactor } from './redactor';
import { sseFrames } from './sse-source';
import {
  type AnswerCheck,
  type AnswerKind,
  type UpstreamResponse,
  notAnEventStream,
  parseUpstreamAnswer,
  readCapped,
  upstreamHttpError,
} from './upstream-body';
import { mapTransportError } from './upstream-errors';
import { requestBody } from './request-body';
import { type CallSignal, observedBySignal } from './call-signal';

export type { UpstreamResponse } from './upstream-body';
export { mapTransportError } from './upstream-errors';

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: CallSignal;
}

/** A 2xx non-streamed answer: its bytes, and the same parsed and checked. */
export interface UpstreamAnswer {
  body: Buffer;
  value: Record<string, unknown>;
}

/**
 * The one HTTP client for every upstream, and the one place upstream bytes enter the
 * gateway: an undici Agent with keep-alive pools per origin, uncapped (or operator-capped)
 * connections so concurrent streams never queue, timeouts for connect, response headers
 * and body silence; size caps on answers and stream events; and redaction of every
 * configured secret from upstream error text (error statuses, 2xx error bodies, error
 * frames), whatever the provider.
 */
@Injectable()
export class UpstreamHttpClient implements OnApplicationShutdown {
  private readonly agents: AgentPool;
  private readonly maxAnswerBytes: number;
  private readonly maxEventBytes: number;
  private readonly redactText = (text: string): string => this.redactor.redact(text);
  /** For the bounded reads of error bodies, which may cut a secret at the limit. */
  private readonly redactCutText = (text: string): string => this.redactor.redactCut(text);

  constructor(
    config: ConfigService<AllConfig, true>,
    @Inject(Redactor) private readonly redactor: Redactor,
  ) {
    const c = config.get('upstream', { infer: true });
    this.maxAnswerBytes = c.maxAnswerBytes;
    this.maxEventBytes = c.maxEventBytes;
    this.agents = new AgentPool(
      {
        connections: c.maxConnections === 0 ? null : c.maxConnections,
        keepAliveTimeout: c.keepAliveTimeoutMs,
        headersTimeout: c.headersTimeoutMs,
        bodyTimeout: c.bodyTimeoutMs,
      },
      c.connectTimeoutMs,
    );
  }

  /** Sends the request; resolves with any HTTP status, rejects with typed errors. */
  async send(req: UpstreamRequest): Promise<UpstreamResponse> {
    // The client request this call serves, if any: metrics time the call, and a trace
    // gets a CLIENT span whose `traceparent` goes upstream.
    const observed = observedBySignal(req.signal);
    const headers =
      observed === undefined
        ? req.headers
        : observed.upstreamStarted(req.method, req.url, req.headers);
    // Deadlines of this attempt when the resilience layer set them; else the agent's.
    const timeouts = callTimeoutsOf(req.signal);
    const body = requestBody(req.body, headers);
    try {
      const res = await this.agents.get(timeouts?.connectMs).request({
        origin: new URL(req.url).origin,
        path: req.url.slice(req.url.indexOf('/', req.url.indexOf('//') + 2)),
        method: req.method,
        headers: body.headers,
        // undici sends iterables too; its option type leaves them out.
        body: body.body as Buffer | undefined,
        signal: req.signal,
        headersTimeout: timeouts?.headersMs,
        bodyTimeout: timeouts?.bodyMs,
      });
      observed?.upstreamResponded(res.statusCode, res.body);
      return res;
    } catch (e) {
      const error = mapTransportError(e, req.signal);
      observed?.upstreamFailed(error);
      throw error;
    }
  }

  /** Sends the request and throws a typed, redacted UpstreamHttpError on a non-2xx status. */
  async sendOk(req: UpstreamRequest, providerName: string): Promise<UpstreamResponse> {
    const res = await this.send(req);
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return res;
    }
    throw this.redactor.redactError(await upstreamHttpError(res, providerName, this.redactCutText));
  }

  /**
   * Reads a 2xx non-streamed answer within UPSTREAM_MAX_ANSWER_BYTES and checks it is an
   * answer of `kind`; rejects with a typed, redacted error otherwise (see parseUpstreamAnswer).
   */
  async readAnswer(
    res: UpstreamResponse,
    signal: CallSignal,
    providerName: string,
    kind: AnswerKind | AnswerCheck,
  ): Promise<UpstreamAnswer> {
    const body = await readCapped(res, this.maxAnswerBytes, signal, providerName);
    try {
      return { body, value: parseUpstreamAnswer(body, providerName, kind, this.redactText) };
    } catch (e) {
      throw this.redactor.redactError(e);
    }
  }

  /**
   * Rejects (redacted, before any byte reached the client) when a 2xx answer is not a
   * stream of the `framing` (SSE unless the provider says otherwise).
   */
  async requireEventStream(
    res: UpstreamResponse,
    providerName: string,
    framing: StreamFraming = 'sse',
  ): Promise<void> {
    const error = await notAnEventStream(res, providerName, this.redactCutText, framing);
    if (error !== undefined) {
      throw this.redactor.redactError(error);
    }
  }

  /**
   * The frames of a 2xx stream (SSE, JSON lines or AWS event stream, by `framing`), each event within
   * UPSTREAM_MAX_EVENT_BYTES, error frames redacted. `relayed`: the frames go to the client
   * as they are (fast path), so one that is not JSON fails the stream.
   */
  eventStream(
    res: UpstreamResponse,
    ctx: CallContext,
    providerName: string,
    relayed: boolean,
    framing: StreamFraming = 'sse',
  ): Observable<SseFrame> {
    return sseFrames(res, {
      flow: ctx.flow,
      abort: ctx.abort,
      signal: ctx.signal,
      providerName,
      requestId: ctx.requestId,
      maxEventBytes: this.maxEventBytes,
      redact: this.redactText,
      relayed,
      framing,
    });
  }

  /**
   * A 2xx fast-path answer as the client gets it: the JSON body read and checked, or the
   * SSE frames relayed as they are (after checking that it is a stream).
   */
  async relay(
    res: UpstreamResponse,
    ctx: CallContext,
    providerName: string,
    stream: boolean,
    kind: AnswerKind | AnswerCheck,
  ): Promise<PassthroughResult> {
    if (!stream) {
      const answer = await this.readAnswer(res, ctx.signal, providerName, kind);
      return { kind: 'json', status: res.statusCode, contentType: 'application/json', ...answer };
    }
    await this.requireEventStream(res, providerName);
    return { kind: 'stream', frames: this.eventStream(res, ctx, providerName, true) };
  }

  /** A typed error with every configured secret removed from its message. */
  redactError<E>(error: E): E | Error {
    return this.redactor.redactError(error);
  }

  /**
   * Runs after the HTTP server has closed, i.e. after in-flight streams finished or were
   * cut at SHUTDOWN_TIMEOUT_MS; anything still open upstream is destroyed, not awaited.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.agents.destroy();
  }
}
