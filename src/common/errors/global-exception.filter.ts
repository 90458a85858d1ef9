import { routedPath } from '../key-policy';
import { Catch } from '@nestjs/common';
import type { GatewayRequest } from '../request-context';
import { EnvelopeExceptionFilter } from './envelope-exception.filter';
import type { ErrorEnvelope } from './envelopes';

/** Which envelope a request that reached no format controller should get. */
export function envelopeForPath(raw: string, anthropicVersion: unknown): ErrorEnvelope {
  const path = routedPath(raw);
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) {
    return 'anthropic';
  }
  if (anthropicVersion !== undefined && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
    return 'anthropic';
  }
  return 'openai';
}

/** Last-resort filter: unknown routes and anything no format filter caught. */
@Catch()
export class GlobalExceptionFilter extends EnvelopeExceptionFilter {
  protected envelopeFor(req: GatewayRequest): ErrorEnvelope {
    return envelopeForPath(req.path, req.headers['anthropic-version']);
  }
}
