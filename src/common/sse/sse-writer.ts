import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { Observable, Subscription } from 'rxjs';
import { GatewayError } from '../errors/gateway-errors';
import { normalizeError } from '../errors/normalize-error';
import { FlowControl } from './flow-control';

/** One server-sent event. `data` is already serialized; framing happens only here. */
export interface SseFrame {
  event?: string;
  data: string;
}

export interface SseWriteOptions {
  /** Interval of `: keepalive` comments while the source is silent. */
  keepaliveMs: number;
  flow: FlowControl;
  /** Frames that report an error after the stream started, in the format's own grammar. */
  errorFrames(error: GatewayError): SseFrame[];
  /** Frames written after the source completes (e.g. `data: [DONE]`). */
  endFrames?: SseFrame[];
  /** Called once when the response is over, however it ended. */
  onDone?(outcome: 'completed' | 'errored' | 'client_closed', error?: GatewayError): void;
}

const KEEPALIVE = ': keepalive\n\n';
const logger = new Logger('SseWriter');

export function encodeFrame(frame: SseFrame): string {
  const data = frame.data.includes('\n') ? frame.data.split('\n').join('\ndata: ') : frame.data;
  return frame.event === undefined
    ? `data: ${data}\n\n`
    : `event: ${frame.event}\ndata: ${data}\n\n`;
}

/** Headers common to every SSE response. */
export function writeSseHead(res: Response): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
}

/**
 * Writes an Observable of frames to the response as SSE: headers at once, each frame as
 * soon as it arrives, keep-alive comments while the source is silent, backpressure via
 * `flow`, in-band error frames when the source fails, and unsubscription (which aborts
 * the upstream) as soon as the client goes away.
 */
export function writeSse(res: Response, frames: Observable<SseFrame>, opts: SseWriteOptions): void {
  writeSseHead(res);
  let finished = false;
  const keepalive = setTimeout(function tick() {
    if (!finished) {
      res.write(KEEPALIVE);
      keepalive.refresh();
    }
  }, opts.keepaliveMs);
  keepalive.unref();

  const onDrain = (): void => opts.flow.resume();
  const finish = (
    outcome: 'completed' | 'errored' | 'client_closed',
    error?: GatewayError,
  ): void => {
    if (finished) {
      return;
    }
    finished = true;
    clearTimeout(keepalive);
    res.off('drain', onDrain);
    res.off('close', onClose);
    // A source parked on backpressure must wake up to see it was cancelled.
    opts.flow.resume();
    if (outcome !== 'client_closed') {
      res.end();
    }
    opts.onDone?.(outcome, error);
  };
  const write = (chunk: string): void => {
    if (!res.write(chunk)) {
      opts.flow.pause();
    }
  };
  function onClose(): void {
    if (!finished) {
      subscription.unsubscribe();
      finish('client_closed');
    }
  }
  res.on('drain', onDrain);
  res.on('close', onClose);

  // 'close' is emitted asynchronously, so onClose never runs before this assignment.
  const subscription: Subscription = frames.subscribe({
    next(frame) {
      keepalive.refresh();
      write(encodeFrame(frame));
    },
    error(err: unknown) {
      const { error, isUnexpected } = normalizeError(err, 'POST', '');
      if (isUnexpected) {
        logger.error(`stream source failed: ${String(err)}`, (err as Error)?.stack);
      }
      for (const frame of opts.errorFrames(error)) {
        write(encodeFrame(frame));
      }
      finish('errored', error);
    },
    complete() {
      for (const frame of opts.endFrames ?? []) {
        write(encodeFrame(frame));
      }
      finish('completed');
    },
  });
}
