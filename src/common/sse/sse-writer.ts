import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { Observable, Subscription } from 'rxjs';
import { markFirstEvent } from '../observed-request';
import { GatewayError } from '../errors/gateway-errors';
import { normalizeError } from '../errors/normalize-error';
import type { GatewayRequest } from '../request-context';
import { type ActiveStreams, activeStreamsOf } from './active-streams';
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
  const stream = new SseResponse(res, opts);
  stream.commit();
  stream.pipe(frames);
}

export interface SseStartOptions extends SseWriteOptions {
  /** How long to send nothing while the source starts (see {@link writeSseWhenStarted}). */
  holdMs: number;
  /** Called just before the hold ends with the head committed while the source still starts. */
  onHeldCommit?(): void;
}

/**
 * Writes a stream whose source is still starting (`start`: an upstream call up to its
 * first event). For `holdMs` nothing is sent, so that a failure still gets its own HTTP
 * status: the returned promise rejects with it, for the format's exception filter. After
 * that the SSE head (200) is committed and `: keepalive` comments go out every
 * `keepaliveMs` (so that idle timeouts of proxies in front do not fire while a slow
 * upstream thinks), and a failure is written as the format's error frames instead.
 */
export async function writeSseWhenStarted(
  res: Response,
  start: Promise<Observable<SseFrame>>,
  opts: SseStartOptions,
): Promise<void> {
  const stream = new SseResponse(res, opts);
  const hold = setTimeout(() => {
    opts.onHeldCommit?.();
    stream.keepalive();
  }, opts.holdMs);
  hold.unref();
  let frames: Observable<SseFrame>;
  try {
    frames = await start;
  } catch (error) {
    clearTimeout(hold);
    if (!stream.committed) {
      stream.release();
      throw error;
    }
    stream.fail(error);
    return;
  }
  clearTimeout(hold);
  stream.commit();
  stream.pipe(frames);
}

/**
 * One SSE response: commits the head once, sends keep-alives on one timer (refreshed by
 * every frame, so they go out only while the source is silent), and ends exactly once.
 */
class SseResponse {
  committed = false;
  private finished = false;
  private readonly registry: ActiveStreams | undefined;
  private subscription: Subscription | undefined;
  private sentFrame = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onDrain = (): void => this.opts.flow.resume();
  private readonly onClose = (): void => {
    if (!this.finished) {
      this.subscription?.unsubscribe();
      this.finish('client_closed');
    }
  };

  constructor(
    private readonly res: Response,
    private readonly opts: SseWriteOptions,
  ) {
    res.on('drain', this.onDrain);
    res.on('close', this.onClose);
    // Test doubles of a response have no express app; they need no shutdown either.
    this.registry = res.app === undefined ? undefined : activeStreamsOf(res.app);
    this.registry?.add(this);
  }

  /** Sends the SSE head (200) if not yet sent, and starts the keep-alive timer. */
  commit(): void {
    if (this.committed || this.finished) {
      return;
    }
    this.committed = true;
    writeSseHead(this.res);
    this.timer = setTimeout(() => this.keepalive(), this.opts.keepaliveMs);
    this.timer.unref();
  }

  /** One `: keepalive` comment (committing the head first), then again after keepaliveMs. */
  keepalive(): void {
    if (this.finished) {
      return;
    }
    this.commit();
    this.res.write(KEEPALIVE);
    this.timer?.refresh();
  }

  /** Gives the response back untouched (nothing was written), e.g. to an exception filter. */
  release(): void {
    this.finished = true;
    this.detach();
  }

  pipe(frames: Observable<SseFrame>): void {
    if (this.finished) {
      return;
    }
    // 'close' is emitted asynchronously, so onClose never runs before this assignment.
    this.subscription = frames.subscribe({
      next: (frame) => {
        if (!this.sentFrame) {
          // Time to first token, for metrics and the trace.
          this.sentFrame = true;
          markFirstEvent(this.res.req);
        }
        this.timer?.refresh();
        this.write(encodeFrame(frame));
      },
      error: (err: unknown) => this.fail(err),
      complete: () => {
        for (const frame of this.opts.endFrames ?? []) {
          this.write(encodeFrame(frame));
        }
        this.finish('completed');
      },
    });
  }

  /** Ends the committed stream with the format's error frames. */
  fail(err: unknown): void {
    if (this.finished) {
      return;
    }
    // Shutdown can end a stream that is still holding its head back.
    this.commit();
    const { error, isUnexpected } = normalizeError(err, 'POST', '');
    if (isUnexpected) {
      logger.error(`stream source failed: ${String(err)}`, (err as Error)?.stack);
    }
    for (const frame of this.opts.errorFrames(error)) {
      this.write(encodeFrame(frame));
    }
    this.finish('errored', error);
  }

  private write(chunk: string): void {
    // Frames produced in one tick (an upstream read often carries several) leave in one
    // system call: corked until the tick's synchronous work is done, then flushed at once.
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(this.uncork);
    }
    if (!this.res.write(chunk)) {
      this.opts.flow.pause();
    }
  }

  private corked = false;

  private readonly uncork = (): void => {
    if (this.corked) {
      this.corked = false;
      this.res.uncork();
    }
  };

  private detach(): void {
    this.registry?.delete(this);
    clearTimeout(this.timer);
    this.res.off('drain', this.onDrain);
    this.res.off('close', this.onClose);
  }

  private finish(outcome: 'completed' | 'errored' | 'client_closed', error?: GatewayError): void {
    if (this.finished) {
      return;
    }
    this.finished = true;
    this.detach();
    // Ended from outside (shutdown) while the source runs: cancel it. A source not yet
    // subscribed (the head was still held) is cancelled by the call context, which aborts
    // the upstream when the response closes.
    this.subscription?.unsubscribe();
    // A source parked on backpressure must wake up to see it was cancelled.
    this.opts.flow.resume();
    if (error !== undefined) {
      // The access log's errorCode, as the exception filters set it for errors before the head.
      const ctx = (this.res.req as Partial<GatewayRequest> | undefined)?.ctx;
      if (ctx !== undefined) {
        ctx.errorCode = error.code ?? String(error.status);
      }
    }
    this.uncork();
    if (outcome !== 'client_closed') {
      this.res.end();
    }
    this.opts.onDone?.(outcome, error);
  }
}
