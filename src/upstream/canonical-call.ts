import { Observable } from 'rxjs';
import type { StreamFraming } from '../catalog/provider-kind';
import type { CanonicalEvent } from '../core/canonical';
import type { CallContext } from './provider.interface';
import { logMalformedEvent } from './sse-source';
import type { AnswerCheck, AnswerKind } from './upstream-body';
import { malformedEventError } from './upstream-errors';
import type { UpstreamHttpClient, UpstreamResponse } from './upstream-http.client';

/** Turns an upstream's stream events into canonical events; one instance per stream. */
export interface StreamDecoder {
  /** `name`: the frame's event name (SSE `event:`, event-stream `:event-type`), if any. */
  push(event: Record<string, unknown>, name?: string): CanonicalEvent[];
  /** The body ended; throws when the stream was cut short. */
  end(): CanonicalEvent[];
}

export interface CanonicalCall {
  /** Reads bodies and frames within the size caps, and redacts upstream error text. */
  http: UpstreamHttpClient;
  /** The serialized upstream request: given to `send` once, then let go. */
  payload: string;
  /** Sends `payload`; resolves with a 2xx response, rejects with typed errors. */
  send(payload: string): Promise<UpstreamResponse>;
  stream: boolean;
  /** How the upstream frames its stream (its descriptor's `framing`). */
  framing: StreamFraming;
  ctx: CallContext;
  providerName: string;
  /** The API whose answer a non-streamed body must be, or the provider's own check. */
  answer: AnswerKind | AnswerCheck;
  /** A non-streamed answer (checked to be one) as canonical events. */
  fromJson(body: Record<string, unknown>): CanonicalEvent[];
  decoder(): StreamDecoder;
}

/**
 * One translated upstream call as a canonical event stream. Nothing is sent until
 * subscription, and it is sent once (a second subscription fails); unsubscribing aborts
 * the upstream request (and its body), so a client going away cancels it at once. Stream
 * frames (SSE events or JSON lines, as the provider frames them) go through the decoder
 * (`[DONE]` ends a chat stream); backpressure reaches the upstream socket through
 * `ctx.flow`. Every error leaves redacted, since decoders build theirs from upstream text
 * (error events, failed responses); a frame that is not JSON fails the stream.
 */
export function canonicalCall({ payload, ...call }: CanonicalCall): Observable<CanonicalEvent> {
  // The payload is often the whole conversation (hundreds of KB for an agent): it is sent
  // once and let go, so that a stream running for minutes does not keep it.
  let unsent: string | undefined = payload;
  return new Observable<CanonicalEvent>((subscriber) => {
    const body = unsent;
    unsent = undefined;
    if (body === undefined) {
      subscriber.error(new Error('an upstream call is sent once: call the provider again'));
      return;
    }
    const { ctx, http } = call;
    const fail = (e: unknown): void => subscriber.error(http.redactError(e));
    let closed = false;
    let innerTeardown: (() => void) | undefined;
    /** Set once the upstream answer was read to its end: nothing left to cancel. */
    let finished = false;
    call.send(body).then(
      async (res) => {
        if (closed) {
          res.body.destroy();
          return;
        }
        if (!call.stream) {
          let parsed: Record<string, unknown>;
          try {
            ({ value: parsed } = await http.readAnswer(
              res,
              ctx.signal,
              call.providerName,
              call.answer,
            ));
          } catch (e) {
            fail(e);
            return;
          }
          finished = true;
          try {
            for (const event of call.fromJson(parsed)) {
              subscriber.next(event);
            }
            subscriber.complete();
          } catch (e) {
            fail(e);
          }
          return;
        }
        try {
          await http.requireEventStream(res, call.providerName, call.framing);
        } catch (e) {
          if (!closed) {
            fail(e);
          }
          return;
        }
        if (closed) {
          res.body.destroy();
          return;
        }
        const decoder = call.decoder();
        let done = false;
        const frames = http.eventStream(res, ctx, call.providerName, false, call.framing);
        const sub = frames.subscribe({
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
                logMalformedEvent(ctx.requestId, call.providerName, frame.event, frame.data.length);
                throw malformedEventError(call.providerName);
              }
              if (frame.event === 'error' && data.type === undefined) {
                data = { type: 'error', error: data.error ?? data };
              }
              for (const event of decoder.push(data, frame.event)) {
                subscriber.next(event);
              }
            } catch (e) {
              done = true;
              fail(e);
            }
          },
          error(e: unknown) {
            if (!done) {
              done = true;
              fail(e);
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
              fail(e);
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
          fail(e);
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
