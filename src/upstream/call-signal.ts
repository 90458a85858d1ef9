import { type ObservedRequest, observedRequest } from '../common/observed-request';

/**
 * Per-call deadlines the upstream client applies (undici's per-request `headersTimeout`
 * and `bodyTimeout`, and an agent per connect timeout), carried by the call's signal so
 * that no provider has to carry them: the resilience layer sets them for each attempt,
 * the client reads them in `send`.
 */
export interface CallTimeouts {
  /** TCP (and TLS) connect: picks the client's agent with that connect timeout. */
  connectMs?: number;
  /** Time to the response headers (first byte). */
  headersMs: number;
  /** Longest silence between two body chunks. */
  bodyMs: number;
}

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
 * client needs to know of the call (no WeakMap keyed by signal). As with an EventTarget,
 * each listener runs once, in the order added; one removed during the abort does not run,
 * one added during it does, one added after it never; and one that throws does not keep
 * the others from running (its error is rethrown on the next tick, as an uncaught one).
 */
export class CallAbort implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  /** The client request this upstream call serves, for its metrics and trace span. */
  observed: ObservedRequest | undefined = undefined;
  /** This attempt's deadlines, when the resilience layer set them. */
  timeouts: CallTimeouts | undefined = undefined;
  private listeners: ((() => void) | undefined)[] | undefined = undefined;

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
    this.reason =
      reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    if (listeners === undefined) {
      return;
    }
    // Indexed, not iterated over a copy: a listener removed by an earlier one (the request's
    // end releasing an attempt) is skipped and one added is reached, as on an EventTarget.
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i];
      if (listener === undefined) {
        continue;
      }
      try {
        listener();
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
    this.listeners = undefined;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    // After the abort only a listener added while the others run still runs (as on an
    // EventTarget, the dispatch loop reaches it); once it is over, none will.
    if (type !== 'abort' || (this.aborted && this.listeners === undefined)) {
      return;
    }
    const listeners = this.listeners;
    // A literal holds its one listener exactly; `[]` grown by push() reserves 17 slots,
    // kept for as long as a stream is open.
    if (listeners === undefined) {
      this.listeners = [listener];
    } else if (!listeners.includes(listener)) {
      listeners.push(listener);
    }
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (type !== 'abort' || listeners === undefined) {
      return;
    }
    const at = listeners.indexOf(listener);
    if (at < 0) {
      return;
    }
    if (this.aborted) {
      // Mid-dispatch: blank the slot so that the loop's indices stay right.
      listeners[at] = undefined;
    } else {
      listeners.splice(at, 1);
    }
  }
}

/** Ties an upstream call's abort signal to its request (see createCallContext). */
export function linkUpstreamSignal(signal: CallAbort, req: object): void {
  signal.observed = observedRequest(req);
}

/** The request an upstream call belongs to; undefined for the gateway's own calls (judges). */
export function observedBySignal(signal: CallSignal): ObservedRequest | undefined {
  return signal instanceof CallAbort ? signal.observed : undefined;
}
