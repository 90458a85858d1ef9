import type { Application } from 'express';
import type { GatewayError } from '../errors/gateway-errors';

/** A stream that can be ended early with its format's error frames. */
export interface EndableStream {
  /** Writes the format's error frames for `error` and ends the response. */
  fail(error: GatewayError): void;
}

const KEY = 'gatewayActiveStreams';

/**
 * The SSE responses in flight on one express app, so that shutdown can end each with its
 * format's error event (and the access log and the limits see it end) instead of cutting
 * its socket. Kept in `app.locals`, so every app (e.g. each test gateway in one process)
 * has its own and non-streamed requests pay nothing.
 */
export class ActiveStreams {
  private readonly streams = new Set<EndableStream>();

  add(stream: EndableStream): void {
    this.streams.add(stream);
  }

  delete(stream: EndableStream): void {
    this.streams.delete(stream);
  }

  get size(): number {
    return this.streams.size;
  }

  /** Fails every stream still open with `error`; returns how many there were. */
  endAll(error: GatewayError): number {
    const open = [...this.streams];
    this.streams.clear();
    for (const stream of open) {
      stream.fail(error);
    }
    return open.length;
  }
}

/** The registry of an express app, created on first use. */
export function activeStreamsOf(app: Application): ActiveStreams {
  const locals = app.locals as Record<string, unknown>;
  let streams = locals[KEY] as ActiveStreams | undefined;
  if (streams === undefined) {
    streams = new ActiveStreams();
    locals[KEY] = streams;
  }
  return streams;
}
