import { Catch } from '@nestjs/common';
import { EnvelopeExceptionFilter } from '../../common/errors/envelope-exception.filter';
import type { ErrorEnvelope } from '../../common/errors/envelopes';

/**
 * Errors on Anthropic-format endpoints (auth failures of the global guard included):
 * `{"type":"error","error":{"type","message"},"request_id"}`.
 */
@Catch()
export class AnthropicExceptionFilter extends EnvelopeExceptionFilter {
  protected envelopeFor(): ErrorEnvelope {
    return 'anthropic';
  }
}
