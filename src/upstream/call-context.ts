import { FlowControl } from '../common/sse/flow-control';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { CallContext } from './provider.interface';

/**
 * Builds the per-call context: its signal aborts as soon as the client's connection
 * closes before the response finished, which cancels the upstream request at once.
 */
export function createCallContext(req: GatewayRequest, res: GatewayResponse): CallContext {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) {
      controller.abort();
    }
  });
  return {
    requestId: req.ctx.requestId,
    signal: controller.signal,
    abort: () => controller.abort(),
    flow: new FlowControl(),
    clientHeaders: req.headers,
    droppedParams: [],
  };
}
