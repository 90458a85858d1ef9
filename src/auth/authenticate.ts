import type { IncomingHttpHeaders } from 'node:http';
import { AuthenticationError } from '../common/errors/gateway-errors';
import type { ApiKeyInfo, ApiKeyService } from './api-key.service';

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1].trim() : undefined;
}

/**
 * Finds the client key in `Authorization: Bearer <key>` (OpenAI SDK, Anthropic SDK 1.x) or
 * `x-api-key: <key>` (Anthropic SDK 0.x); when both are sent, either may carry it.
 * Throws a 401 that says whether a key was missing or wrong.
 */
export function authenticate(headers: IncomingHttpHeaders, keys: ApiKeyService): ApiKeyInfo {
  const candidates = [bearer(headers.authorization), headers['x-api-key']];
  let presented = false;
  for (const candidate of candidates) {
    if (typeof candidate !== 'string' || candidate === '') {
      continue;
    }
    presented = true;
    const info = keys.verify(candidate);
    if (info) {
      return info;
    }
  }
  throw presented
    ? new AuthenticationError('Incorrect API key provided.', 'invalid_api_key')
    : new AuthenticationError(
        'You didn\'t provide an API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".',
        null,
      );
}
