import { ArgumentsHost, ExceptionFilter, Logger } from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../request-context';
import { ErrorEnvelope, errorBody } from './envelopes';
import { normalizeError } from './normalize-error';

/**
 * Shared body of every exception filter: normalize, log the unexpected, answer in the
 * envelope the subclass picks. Subclasses decide only which envelope a request gets.
 */
export abstract class EnvelopeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  protected abstract envelopeFor(req: GatewayRequest): ErrorEnvelope;

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const res = http.getResponse<GatewayResponse>();
    const { error, isUnexpected } = normalizeError(exception, req.method, req.path);
    if (isUnexpected) {
      this.logger.error(
        `unhandled error while serving request ${req.ctx?.requestId ?? '-'}: ${String(exception)}`,
        exception instanceof Error ? exception.stack : undefined,
      );
    }
    if (req.ctx) {
      req.ctx.errorCode = error.code ?? String(error.status);
    }
    if (res.headersSent) {
      // A stream already started; its writer reports errors in-band. Just close.
      res.end();
      return;
    }
    req.ctx?.beforeErrorResponse?.();
    res.status(error.status);
    for (const [name, value] of Object.entries(error.headers)) {
      res.setHeader(name, value);
    }
    res.json(errorBody(this.envelopeFor(req), error, req.ctx?.requestId));
  }
}
