import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { GatewayError } from '../../common/errors/gateway-errors';
import type { RequestTracePort } from '../../common/observed-request';
import { own, setOwn } from '../../common/own';

const propagator = new W3CTraceContextPropagator();
const setter = {
  set(carrier: Record<string, string>, key: string, value: string): void {
    setOwn(carrier, key, value);
  },
};

/**
 * The trace of one request: its SERVER span, and children for the steps the gateway can
 * see from outside the steps' own code (auth, guards, the upstream call). Holds no
 * message content: only ids, models, counts, statuses and error codes go on spans.
 */
export class RequestTrace implements RequestTracePort {
  /** The open upstream call's span, which receives the first-token event too. */
  private upstream?: Span;
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /** A child span of the request span. */
  child(name: string, kind: SpanKind = SpanKind.INTERNAL, attributes?: Attributes): Span {
    return this.tracer.startSpan(name, { kind, attributes }, this.context);
  }

  /**
   * Runs one step (a guard, the auth check) in a child span that ends when the step
   * settles, synchronously or not, and records a thrown GatewayError's code.
   */
  step<T>(name: string, run: () => T): T {
    const span = this.child(name);
    try {
      const result = run();
      if (result instanceof Promise) {
        return result.then(
          (value: unknown) => {
            span.end();
            return value;
          },
          (error: unknown) => {
            failSpan(span, error);
            span.end();
            throw error;
          },
        ) as T;
      }
      span.end();
      return result;
    } catch (error) {
      failSpan(span, error);
      span.end();
      throw error;
    }
  }

  /** An event on the request span and, while one is open, on the upstream call's span. */
  event(name: string): void {
    this.span.addEvent(name);
    this.upstream?.addEvent(name);
  }

  /** Opens the CLIENT span of an upstream call; returns headers with its `traceparent`. */
  upstreamStarted(
    method: string,
    url: string,
    headers: Record<string, string>,
  ): Record<string, string> {
    const parsed = new URL(url);
    const span = this.child(`upstream ${method}`, SpanKind.CLIENT, {
      'http.request.method': method,
      'server.address': parsed.hostname,
      'server.port': Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80),
      'url.path': parsed.pathname,
    });
    this.upstream?.end();
    this.upstream = span;
    const out = { ...headers };
    propagator.inject(trace.setSpan(this.context, span), out, setter);
    return out;
  }

  /** The upstream answered with headers; the span stays open until `body` closes. */
  upstreamResponded(status: number, body: NodeJS.EventEmitter): void {
    const span = this.upstream;
    if (span === undefined) {
      return;
    }
    span.setAttribute('http.response.status_code', status);
    span.addEvent('http.first_byte');
    if (status >= 400) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', String(status));
    }
    body.once('close', () => this.endUpstream(span));
  }

  upstreamFailed(error: unknown): void {
    const span = this.upstream;
    if (span !== undefined) {
      failSpan(span, error);
      this.endUpstream(span);
    }
  }

  /** Ends the request span (and an upstream span still open) with its final attributes. */
  end(attributes: Attributes, error?: string): void {
    if (this.upstream !== undefined) {
      this.endUpstream(this.upstream);
    }
    this.span.setAttributes(attributes);
    if (error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR });
      this.span.setAttribute('error.type', error);
    }
    this.span.end();
  }

  private endUpstream(span: Span): void {
    span.end();
    if (this.upstream === span) {
      this.upstream = undefined;
    }
  }
}

/** Marks a span failed with the error's code or class name; never its message (content). */
export function failSpan(span: Span, error: unknown): void {
  const type =
    error instanceof GatewayError
      ? (error.code ?? String(error.status))
      : error instanceof Error
        ? error.name
        : 'error';
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', type);
}

/** The W3C trace context a client sent, as the parent of the request span. */
export function clientContext(root: Context, headers: Record<string, unknown>): Context {
  return propagator.extract(root, headers, {
    keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
    get: (carrier: Record<string, unknown>, key: string) => {
      const value = own(carrier, key);
      return typeof value === 'string' ? value : undefined;
    },
  });
}
