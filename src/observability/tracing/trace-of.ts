import { observedRequest } from '../../common/observed-request';
import type { RequestTrace } from './request-trace';

/**
 * The trace of a request, when it is traced. Only TracingService.startRequest makes the
 * traces that RequestObserver.started files on the request, so the port is this class.
 * Apart from request-trace.ts, which loads OpenTelemetry, so that tracing off loads none.
 */
export function traceOf(req: object | undefined): RequestTrace | undefined {
  return observedRequest(req)?.trace as RequestTrace | undefined;
}
