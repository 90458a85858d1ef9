import type { ObservedRequest } from '../observability/observed-request';
import type { CallTimeouts } from './call-timeouts';

/**
 * The abort signal of an upstream call: the part of `AbortSignal` that the gateway and
 * undici read (undici takes any object with `addEventListener`). An `AbortSignal` is one.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * An abort controller that is its own signal, for the two every generation request makes
 * (one for the request, one per upstream attempt). Node builds each `AbortSignal` as an
 * EventTarget whose prototype it then sets, which gives every signal a hidden class of its
 * own: creating, listening to and aborting them was ~6% of the gateway's CPU under load.
 * This one is a plain class with a listener array, which also carries what the upstream
 * client needs to know of the call (no WeakMap keyed by signal); as with an EventTarget, each listener
 * runs once, one added after the abort never runs, and a listener that throws does not
 * keep the others from running (its error is rethrown asynchronously, as an uncaught one).
 */
export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  /** The client request this upstream call serves, for its metrics and trace span. */
  observed: ObservedRequest | undefined = undefined;
  /** This attempt's deadlines, when the resilience layer set them. */
  timeouts: CallTimeouts | undefined = undefined;
  private listeners: (() => void)[] | undefined = undefined;

  /** The signal side; the same object, typed as the read-only part. */
  get signal(): CallSignal {
    return this;
  }

  /** Aborts once: records `reason` (an AbortError DOMException by default) and runs the listeners. */
  abort(reason?: unknown): void {
    if (this.aborted) {
      return;
    }
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) {
      return;
    }
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.aborted) {
      return;
    }
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) {
      listeners.push(listener);
    }
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (type !== 'abort' || listeners === undefined) {
      return;
    }
    const at = listeners.indexOf(listener);
    if (at >= 0) {
      listeners.splice(at, 1);
    }
  }
}
