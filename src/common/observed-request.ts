/**
 * The request's trace as the layers below observability reach it (the upstream client,
 * the SSE writer); observability's RequestTrace implements it.
 */
export interface RequestTracePort {
  /** Opens the upstream call's span; returns the headers to send (with its `traceparent`). */
  upstreamStarted(
    method: string,
    url: string,
    headers: Record<string, string>,
  ): Record<string, string>;
  upstreamResponded(status: number, body: NodeJS.EventEmitter): void;
  upstreamFailed(error: unknown): void;
  /** An event on the request span (and on the open upstream span). */
  event(name: string): void;
}

/**
 * What metrics and traces learn about one request between its arrival and its end, beyond
 * the access log's RequestContext: when the upstream call went out and answered, when the
 * first event reached the client, and the request's trace when tracing is on. Kept in
 * a WeakMap, off the shared request type, and found from the request or from the upstream
 * call's abort signal (the upstream client sees only that: see upstream/call-signal.ts).
 * Here, below every feature, so that the SSE writer, the upstream client and the ledger
 * note what they see without importing observability, which reads it at the end.
 */
export class ObservedRequest {
  /** process.hrtime.bigint() of the first upstream dispatch. */
  upstreamSentAt?: bigint;
  /** process.hrtime.bigint() of the first upstream response headers. */
  upstreamFirstByteAt?: bigint;
  /** process.hrtime.bigint() of the first SSE event written to the client. */
  firstEventAt?: bigint;

  constructor(readonly trace?: RequestTracePort) {}

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
export function observeRequest(req: object, trace?: RequestTracePort): ObservedRequest {
  const observed = new ObservedRequest(trace);
  byRequest.set(req, observed);
  return observed;
}

/** The observed state of a request, if it is observed. */
export function observedRequest(req: object | undefined): ObservedRequest | undefined {
  return req === undefined ? undefined : byRequest.get(req);
}

/** Marks the first event written to the client of a streamed answer (the SSE writer calls it). */
export function markFirstEvent(req: object | undefined): void {
  const observed = observedRequest(req);
  if (observed !== undefined && observed.firstEventAt === undefined) {
    observed.firstEventAt = process.hrtime.bigint();
    observed.trace?.event('gen_ai.first_token');
  }
}
