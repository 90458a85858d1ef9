import { CallAbort, type CallSignal } from './call-signal';

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

export function setCallTimeouts(signal: CallAbort, timeouts: CallTimeouts): void {
  signal.timeouts = timeouts;
}

/** The deadlines set for the call; undefined for a plain AbortSignal (the agent's apply). */
export function callTimeoutsOf(signal: CallSignal): CallTimeouts | undefined {
  return signal instanceof CallAbort ? signal.timeouts : undefined;
}
