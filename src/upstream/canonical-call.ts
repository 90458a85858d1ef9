import { Observable } from 'rxjs';
import { GatewayError } from '../common/errors/gateway-errors';
import type { CanonicalEvent } from '../core/canonical';
import type { CallContext } from './provider.interface';
import { sseFrames } from './sse-source';
import { parseUpstreamObject, requireEventStream } from './upstream-body';
import { mapTransportError, type UpstreamResponse } from './upstream-http.client';

/** Turns an upstream's stream events into canonical events; one instance per stream. */
export interface StreamDecoder {
  push(event: Record<string, unknown>): CanonicalEvent[];
  /** The body ended; throws when the stream was cut short. */
  end(): CanonicalEvent[];
}

export interface CanonicalCall {
  /** Sends the request; resolves with a 2xx response, rejects with typed errors. */
  send(): Promise<UpstreamResponse>;
  stream: boolean;
  ctx: CallContext;
  providerName: string;
  /** A non-streamed answer as canonical events. */
  fromJson(body: Record<string, unknown>): CanonicalEvent[];
  decoder(): StreamDecoder;
}

/**
 * One translated upstream call as a canonical event stream. Nothing is sent until
 * subscription; unsubscribing aborts the upstream request (and its body), so a client
 * going away cancels it at once. Stream frames go through the decoder (`[DONE]` ends a
 * chat stream); backpressure reaches the upstream socket through `ctx.flow`.
 */
export function canonicalCall(call: CanonicalCall): Observable<CanonicalEvent> {
  return new Observable<CanonicalEvent>((subscriber) => {
    const { ctx } = call;
    let closed = false;
    let innerTeardown: (() => void) | undefined;
    /** Set once the upstream answer was read to its end: nothing left to cancel. */
    let finished = false;
    call.send().then(
      async (res) => {
        if (closed) {
          res.body.destroy();
          return;
        }
        if (!call.stream) {
          let parsed: Record<string, unknown>;
          try {
            parsed = parseUpstreamObject(await res.body.text(), call.providerName);
          } catch (e) {
            subscriber.error(e instanceof GatewayError ? e : mapTransportError(e, ctx.signal));
            return;
          }
          finished = true;
          try {
            for (const event of call.fromJson(parsed)) {
              subscriber.next(event);
            }
            subscriber.complete();
          } catch (e) {
            subscriber.error(e);
          }
          return;
        }
        try {
          await requireEventStream(res, call.providerName);
        } catch (e) {
          if (!closed) {
            subscriber.error(e);
          }
          return;
        }
        if (closed) {
          res.body.destroy();
          return;
        }
        const decoder = call.decoder();
        let done = false;
        const sub = sseFrames(res, ctx.flow, ctx.abort, ctx.signal).subscribe({
          next(frame) {
            if (done) {
              return;
            }
            try {
              if (frame.data === '[DONE]') {
                done = true;
                finished = true;
                for (const event of decoder.end()) {
                  subscriber.next(event);
                }
                subscriber.complete();
                return;
              }
              let data: Record<string, unknown>;
              try {
                data = JSON.parse(frame.data) as Record<string, unknown>;
              } catch {
                return; // not an event (e.g. a vendor comment in a data line)
              }
              if (frame.event === 'error' && data.type === undefined) {
                data = { type: 'error', error: data.error ?? data };
              }
              for (const event of decoder.push(data)) {
                subscriber.next(event);
              }
            } catch (e) {
              done = true;
              subscriber.error(e);
            }
          },
          error(e: unknown) {
            if (!done) {
              done = true;
              subscriber.error(e);
            }
          },
          complete() {
            finished = true;
            if (done) {
              return;
            }
            done = true;
            try {
              for (const event of decoder.end()) {
                subscriber.next(event);
              }
              subscriber.complete();
            } catch (e) {
              subscriber.error(e);
            }
          },
        });
        innerTeardown = () => sub.unsubscribe();
        if (closed) {
          sub.unsubscribe();
        }
      },
      (e: unknown) => {
        if (!closed) {
          subscriber.error(e);
        }
      },
    );
    return () => {
      closed = true;
      if (subscriber.closed && finished) {
        return;
      }
      if (innerTeardown) {
        innerTeardown();
      } else {
        // Still waiting for the upstream's headers (or reading a JSON body): cancel it.
        ctx.abort();
      }
    };
  });
}
