import { createParser } from 'eventsource-parser';
import { Observable } from 'rxjs';
import type { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import { mapTransportError, type UpstreamResponse } from './upstream-http.client';

/**
 * The upstream's SSE body as an Observable of frames. Unsubscribing before the body ends
 * aborts the upstream request (through `abort`) and destroys the socket's body.
 */
export function sseFrames(
  res: UpstreamResponse,
  flow: FlowControl,
  abort: () => void,
  signal: AbortSignal,
): Observable<SseFrame> {
  return new Observable<SseFrame>((subscriber) => {
    const body = res.body;
    let ended = false;
    const parser = createParser({
      onEvent(event) {
        subscriber.next(
          event.event === undefined
            ? { data: event.data }
            : { event: event.event, data: event.data },
        );
      },
    });
    // undici's body ignores setEncoding; a streaming decoder keeps split UTF-8 intact.
    const decoder = new TextDecoder();
    body.on('data', (chunk: Buffer) => parser.feed(decoder.decode(chunk, { stream: true })));
    body.on('end', () => {
      ended = true;
      // A last event without its blank line still counts: the extra blank lines dispatch
      // it, and are a no-op after a properly terminated stream.
      parser.feed(`${decoder.decode()}\n\n`);
      subscriber.complete();
    });
    body.on('error', (err) => {
      ended = true;
      subscriber.error(mapTransportError(err, signal));
    });
    flow.attach({ pause: () => body.pause(), resume: () => body.resume() });
    return () => {
      if (!ended) {
        abort();
        body.destroy();
      }
    };
  });
}
