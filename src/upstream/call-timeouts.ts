import { CallAbort, type CallSignal, type CallTimeouts } from './call-signal';

export function setCallTimeouts(signal: CallAbort, timeouts: CallTimeouts): void {
  signal.timeouts = timeouts;
}

/** The deadlines set for the call; undefined for a plain AbortSignal (the agent's apply). */
export function callTimeoutsOf(signal: CallSignal): CallTimeouts | undefined {
  return signal instanceof CallAbort ? signal.timeouts : undefined;
}
