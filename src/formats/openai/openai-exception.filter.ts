import { type ArgumentsHost, Catch } from '@nestjs/common';
import { EnvelopeExceptionFilter } from '../../common/errors/envelope-exception.filter';
import type { ErrorEnvelope } from '../../common/errors/envelopes';
import { GatewayError } from '../../common/errors/gateway-errors';

/** Anthropic's "overloaded" status, which OpenAI clients know as 503. */
const OVERLOADED = 529;

/**
 * An error as an OpenAI client should see it: Anthropic's 529 (kept on Messages, where
 * the SDK has a class for it) becomes 503, the OpenAI status for an overloaded server,
 * with the same retry hints.
 */
export function forOpenAiClient(exception: unknown): unknown {
  if (exception instanceof GatewayError && exception.status === OVERLOADED) {
    return new GatewayError(503, exception.kind, exception.message, {
      param: exception.param,
      code: exception.code,
      headers: exception.headers,
      cause: exception,
    });
  }
  return exception;
}

/** Errors on OpenAI-format endpoints: `{"error":{"message","type","param","code"}}`. */
@Catch()
export class OpenAiExceptionFilter extends EnvelopeExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    super.catch(forOpenAiClient(exception), host);
  }

  protected envelopeFor(): ErrorEnvelope {
    return 'openai';
  }
}
