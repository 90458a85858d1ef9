import { Observable } from 'rxjs';
import { GatewayError } from '../errors/gateway-errors';

/**
 * The error for a stream that ended without its format's terminal event (chat `[DONE]` or
 * a `finish_reason`, Messages `message_stop`, a Responses terminal event, a canonical
 * `message_stop`): a 502, reported in-band by the format's own error frames.
 */
export function streamIncompleteError(
  what: 'completion' | 'message' | 'response',
  source: 'upstream' | 'model' = 'upstream',
): GatewayError {
  return new GatewayError(
    502,
    'server',
    `The ${source} stream ended before the ${what} completed.`,
    {
      code: source === 'upstream' ? 'upstream_stream_incomplete' : 'stream_incomplete',
    },
  );
}

/**
 * Runs `end` once `source` completes and appends the frames it returns; `end` throws
 * (usually {@link streamIncompleteError}) to fail the stream instead, so that the SSE
 * writer sends the format's error frames and a cut-off stream never looks complete.
 * Errors of `source` pass through without calling `end`.
 *
 * What `concat(source, defer(end))` does, without its machinery: `concat` is `concatAll`
 * over an array, whose merge state (a queue grown by push, a dozen closures, two extra
 * subscribers) every open stream kept, about 1 KB of heap apiece.
 */
export function endWith<T>(source: Observable<T>, end: () => readonly T[]): Observable<T> {
  return new Observable<T>((subscriber) =>
    source.subscribe({
      next: (value) => subscriber.next(value),
      error: (error: unknown) => subscriber.error(error),
      complete: () => {
        let tail: readonly T[];
        try {
          tail = end();
        } catch (error) {
          subscriber.error(error);
          return;
        }
        for (const value of tail) {
          if (subscriber.closed) {
            return;
          }
          subscriber.next(value);
        }
        subscriber.complete();
      },
    }),
  );
}
