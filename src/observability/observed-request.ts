import type { RequestTrace } from './tracing/request-trace';
import { CallAbort, type CallSignal } from '../upstream/call-signal';

/**
 * What metrics and traces learn about one request between its arrival and its end, beyond
 * the access log's RequestContext: when the upstream call went out and answered, when the
 * first event reached the client, and the request's trace when tracing is on. Kept in
 * a WeakMap, off the shared request type, and found from the request or from the upstream
 * call's abort signal (the upstream client sees only that).
 */
export class ObservedRequest {
  /** process.hrtime.bigint() of the first upstream dispatch. */
  upstreamSentAt?: bigint;
  /** process.hrtime.bigint() of the first upstream response headers. */
  upstreamFirstByteAt?: bigint;
  /** process.hrtime.bigint() of the first SSE event written to the client. */
  firstEventAt?: bigint;

  constructor(readonly trace?: RequestTrace) {}

  /**
   * An upstream call of this request is being sent: notes the time of the first one and,
   * when traced, opens its span; returns the headers to send (with `traceparent` then).
   */
  upstreamStarted(
    method: string,
    url: string,
    headers: Record<string, string>,
  ): Record<string, string> {
    this.upstreamSentAt ??= process.hrtime.bigint();
    return this.trace === undefined ? headers : this.trace.upstreamStarted(method, url, headers);
  }

  /** The upstream sent its response headers; `body` closes when the call is over. */
  upstreamResponded(status: number, body: NodeJS.EventEmitter): void {
    this.upstreamFirstByteAt ??= process.hrtime.bigint();
    this.trace?.upstreamResponded(status, body);
  }

  upstreamFailed(error: unknown): void {
    this.trace?.upstreamFailed(error);
  }
}

const byRequest = new WeakMap<object, ObservedRequest>();

/** Starts observing a request (the request-context middleware does, when observers exist). */
export function observeRequest(req: object, trace?: RequestTrace): ObservedRequest {
  const observed = new ObservedRequest(trace);
  byRequest.set(req, observed);
  return observed;
}

/** The observed state of a request, if it is observed. */
export function observedRequest(req: object | undefined): ObservedRequest | undefined {
  return req === undefined ? undefined : byRequest.get(req);
}

/** Ties an upstream call's abort signal to its request (see createCallContext). */
export function linkUpstreamSignal(signal: CallAbort, req: object): void {
  signal.observed = byRequest.get(req);
}

/** The request an upstream call belongs to; undefined for the gateway's own calls (judges). */
export function observedBySignal(signal: CallSignal): ObservedRequest | undefined {
  return signal instanceof CallAbort ? signal.observed : undefined;
}

/** Marks the first event written to the client of a streamed answer (the SSE writer calls it). */
export function markFirstEvent(req: object | undefined): void {
  const observed = observedRequest(req);
  if (observed !== undefined && observed.firstEventAt === undefined) {
    observed.firstEventAt = process.hrtime.bigint();
    observed.trace?.event('gen_ai.first_token');
  }
}
