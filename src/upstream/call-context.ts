import { FlowControl } from '../common/sse/flow-control';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import { CallAbort, linkUpstreamSignal } from './call-signal';
import type { CallContext } from './provider.interface';

/** Why an upstream call was cancelled when its response closed: an AbortError, as abort() gives. */
export const RESPONSE_CLOSED = new DOMException('The response closed.', 'AbortError');

/**
 * Builds the per-call context: its signal aborts as soon as the response is over, however
 * it ended, which cancels the upstream request at once. A client that went away is the
 * usual case; a response ended early by the gateway (an error frame written while the
 * upstream still streams, shutdown while the head was held) must not leave the upstream
 * call running either. After a normal end the upstream is done, and aborting is a no-op.
 */
export function createCallContext(req: GatewayRequest, res: GatewayResponse): CallContext {
  const controller = new CallAbort();
  // One shared reason: abort() without one builds a DOMException, stack trace included, on
  // every request (it showed in the CPU profile), though after a normal end nobody reads it.
  // on, not once: 'close' comes once, and once() wraps every listener in two more objects.
  res.on('close', () => controller.abort(RESPONSE_CLOSED));
  // Lets the upstream client attribute its timing and trace span to this request.
  linkUpstreamSignal(controller, req);
  return {
    requestId: req.ctx.requestId,
    signal: controller.signal,
    abort: () => controller.abort(),
    flow: new FlowControl(),
    clientHeaders: req.headers,
    droppedParams: [],
  };
}
