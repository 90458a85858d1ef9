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
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => parser.feed(chunk));
    body.on('end', () => {
      ended = true;
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
