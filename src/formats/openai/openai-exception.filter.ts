import { Catch } from '@nestjs/common';
import { EnvelopeExceptionFilter } from '../../common/errors/envelope-exception.filter';
import type { ErrorEnvelope } from '../../common/errors/envelopes';

/** Errors on OpenAI-format endpoints: `{"error":{"message","type","param","code"}}`. */
@Catch()
export class OpenAiExceptionFilter extends EnvelopeExceptionFilter {
  protected envelopeFor(): ErrorEnvelope {
    return 'openai';
  }
}
