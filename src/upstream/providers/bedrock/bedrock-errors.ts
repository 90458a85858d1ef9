import { GatewayError, UpstreamHttpError } from '../../../common/errors/gateway-errors';

/**
 * Bedrock Runtime's modelled exceptions as typed errors, whether they come as an HTTP
 * status with `x-amzn-ErrorType` or as an exception message inside an event stream.
 * The status and code decide the client's envelope and whether the resilience layer
 * tries again (429, 503, 504 and 502 are retried; 400 and the credential failures not).
 */

/** `ThrottlingException:http://internal.amazon.com/...` or `throttlingException` -> `throttling`. */
export function exceptionName(type: string): string {
  return type
    .split(':')[0]
    .replace(/^.*#/, '')
    .replace(/Exception$/i, '')
    .toLowerCase();
}

/** The gateway's own AWS identity was refused: the client can do nothing about it. */
const CREDENTIAL_FAILURES = new Set([
  'accessdenied',
  'unrecognizedclient',
  'invalidsignature',
  'expiredtoken',
  'incompletesignature',
  'missingauthenticationtoken',
]);

/** The exception an answer without a type stands for (a proxy or load balancer said it). */
const BY_STATUS = new Map([
  [429, 'throttling'],
  [503, 'serviceunavailable'],
  [408, 'modeltimeout'],
]);

/**
 * A Bedrock exception (`type` as the service names it; `status` when it came over HTTP)
 * as a typed error. `message` is upstream text: callers redact it.
 */
export function bedrockError(
  type: string,
  message: string,
  providerName: string,
  status?: number,
  headers: Record<string, string> = {},
): GatewayError {
  const name = exceptionName(type) || (status === undefined ? '' : (BY_STATUS.get(status) ?? ''));
  if (CREDENTIAL_FAILURES.has(name) || status === 401 || status === 403) {
    // The message may name the role or quote the signature: it stays out of the answer.
    return new UpstreamHttpError(
      502,
      'server',
      `The upstream provider '${providerName}' rejected the gateway's AWS credentials (${type.split(':')[0] || `HTTP ${status}`}).`,
      { code: 'upstream_auth_failed' },
    );
  }
  const said = message || `Amazon Bedrock failed (${type || `HTTP ${status}`}).`;
  switch (name) {
    case 'validation':
      return /too long|too many (input )?tokens|context (window|length)/i.test(said)
        ? new UpstreamHttpError(400, 'invalid_request', said, { code: 'context_length_exceeded' })
        : new UpstreamHttpError(400, 'invalid_request', said, { headers });
    case 'throttling':
    case 'servicequotaexceeded':
      return new UpstreamHttpError(429, 'rate_limit', said, {
        code: 'rate_limit_exceeded',
        headers,
      });
    case 'modelnotready':
    case 'serviceunavailable':
      // The model is loading or the service is busy: worth another attempt.
      return new UpstreamHttpError(503, 'overloaded', said, {
        code: name === 'modelnotready' ? 'model_not_ready' : 'upstream_overloaded',
        headers,
      });
    case 'modeltimeout':
      return new UpstreamHttpError(504, 'timeout', said, { code: 'upstream_timeout', headers });
    case 'resourcenotfound':
      return new UpstreamHttpError(404, 'not_found', said, { code: 'model_not_found' });
    default:
      break;
  }
  if (status !== undefined && status >= 400 && status < 500 && status !== 424 && status !== 408) {
    return new UpstreamHttpError(status, status === 429 ? 'rate_limit' : 'invalid_request', said, {
      headers,
    });
  }
  // internalServer, modelError, modelStreamError and anything newer: the upstream failed.
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' failed (${type.split(':')[0] || `HTTP ${status}`}): ${said}`,
    { code: 'upstream_error', headers },
  );
}
