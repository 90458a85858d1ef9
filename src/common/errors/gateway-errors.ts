/**
 * Typed domain errors. Handlers and services throw these; each wire format's filter
 * renders them into its own envelope (OpenAI or Anthropic), so no handler builds an
 * error body by hand.
 */

/** Coarse error category; each envelope maps it to its own `type` string. */
export type ErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'request_too_large'
  | 'rate_limit'
  | 'server'
  | 'overloaded'
  | 'timeout';

export interface GatewayErrorOptions {
  /** Name of the offending request field, when there is one. */
  param?: string | null;
  /** Machine-readable code (OpenAI `code`). */
  code?: string | null;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Machine-readable details (Anthropic `error.details`), e.g. for an SDK's fallback. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly status: number,
    readonly kind: ErrorKind,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

export class InvalidRequestError extends GatewayError {
  constructor(message: string, param: string | null = null, code: string | null = null) {
    super(400, 'invalid_request', message, { param, code });
  }
}

export class MissingSystemPromptError extends GatewayError {
  constructor(message: string, param: string) {
    super(400, 'invalid_request', message, { param, code: 'missing_system_prompt' });
  }
}

export class ModelNotFoundError extends GatewayError {
  constructor(model: string) {
    super(
      404,
      'not_found',
      `The model '${model}' does not exist or you do not have access to it.`,
      {
        param: 'model',
        code: 'model_not_found',
      },
    );
  }
}

export class ModelNotSupportedError extends GatewayError {
  constructor(model: string, endpoint: string, hint: string) {
    super(400, 'invalid_request', `The model '${model}' is not supported on ${endpoint}. ${hint}`, {
      param: 'model',
      code: 'model_not_supported',
    });
  }
}

export class AuthenticationError extends GatewayError {
  constructor(message: string, code: string | null = 'invalid_api_key') {
    super(401, 'authentication', message, { code });
  }
}

/** The key is valid but may not use this model or endpoint (403). */
export class PermissionDeniedError extends GatewayError {
  constructor(message: string, code: string, param: string | null = null) {
    super(403, 'permission', message, { code, param });
  }
}

/** A key not in the cache could not be checked because the key store is unreachable. */
export class KeyStoreUnavailableError extends GatewayError {
  constructor() {
    super(
      503,
      'overloaded',
      'The API key could not be checked right now because the key store is unreachable. Please retry shortly.',
      { code: 'key_store_unavailable', headers: { 'retry-after': '1' } },
    );
  }
}

/** The key's budget for the period is spent (429; retrying before the reset is useless). */
export class BudgetExceededError extends GatewayError {
  constructor(message: string) {
    super(429, 'rate_limit', message, {
      code: 'insufficient_quota',
      headers: { 'x-should-retry': 'false' },
    });
  }
}

export class RouteNotFoundError extends GatewayError {
  constructor(method: string, path: string) {
    super(404, 'not_found', `Invalid URL (${method} ${path})`);
  }
}

export class PayloadTooLargeError extends GatewayError {
  constructor(limitBytes: number) {
    super(
      413,
      'request_too_large',
      `Request body is larger than the limit of ${limitBytes} bytes.`,
      {
        code: 'request_too_large',
      },
    );
  }
}

/** A provider that is in the catalog but cannot be called (e.g. no API key configured). */
export class ProviderUnavailableError extends GatewayError {
  constructor(message: string) {
    super(503, 'server', message, {
      code: 'provider_not_configured',
      headers: { 'x-should-retry': 'false' },
    });
  }
}

/** The usage ledger is off: the gateway runs without a key store (KEY_STORE=off). */
export class UsageLedgerOffError extends GatewayError {
  constructor() {
    super(503, 'server', 'The usage ledger is off: this gateway runs with KEY_STORE=off.', {
      code: 'usage_ledger_off',
      headers: { 'x-should-retry': 'false' },
    });
  }
}

/** The gateway is shutting down and ended a request it could not finish in time. */
export class ServerShuttingDownError extends GatewayError {
  constructor() {
    super(503, 'server', 'The gateway is shutting down; retry the request.', {
      code: 'server_shutting_down',
    });
  }
}

/** The upstream answered with an HTTP error; its status class and message are kept. */
export class UpstreamHttpError extends GatewayError {
  constructor(status: number, kind: ErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(status, kind, message, options);
  }
}

/** The upstream could not be reached or broke the connection. */
export class UpstreamConnectionError extends GatewayError {
  constructor(message: string, cause?: unknown) {
    super(502, 'server', message, { code: 'upstream_unavailable', cause });
  }
}

export class UpstreamTimeoutError extends GatewayError {
  constructor(message: string, cause?: unknown) {
    super(504, 'timeout', message, { code: 'upstream_timeout', cause });
  }
}

/** Our own client went away mid-request; nothing is sent and nothing is reported. */
export class ClientClosedRequestError extends GatewayError {
  constructor() {
    super(499, 'invalid_request', 'The client closed the request.', {
      code: 'client_closed_request',
    });
  }
}

/** The request asks for more tokens than the model's context window holds (400). */
export class ContextLengthExceededError extends GatewayError {
  constructor(message: string, param: string | null = 'messages') {
    super(400, 'invalid_request', message, { param, code: 'context_length_exceeded' });
  }
}

/** A client key went over one of its rate limits (429, with `retry-after`). */
export class RateLimitExceededError extends GatewayError {
  constructor(message: string, headers: Record<string, string>) {
    super(429, 'rate_limit', message, { code: 'rate_limit_exceeded', headers });
  }
}

/**
 * Too many failed authentications from one client address: its keys are not looked up in
 * the key store until the window ends (429, `retry-after`).
 */
export class AuthThrottledError extends GatewayError {
  constructor(waitMs: number) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(
      429,
      'rate_limit',
      `Too many requests with invalid API keys from this address; retry after ${seconds} s.`,
      { code: 'too_many_failed_authentications', headers: { 'retry-after': String(seconds) } },
    );
  }
}

/** Every deployment that could serve the request is at its own catalog limits (429, `retry-after`). */
export class DeploymentsAtCapacityError extends GatewayError {
  constructor(model: string, waitMs: number) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(
      429,
      'rate_limit',
      `Every deployment of '${model}' (and of its fallbacks) is at its limits; retry after ${seconds} s.`,
      { code: 'deployments_at_capacity', headers: { 'retry-after': String(seconds) } },
    );
  }
}

/** The shared rate-limit store cannot be reached and limits fail closed (503). */
export class RateLimiterUnavailableError extends GatewayError {
  constructor() {
    super(
      503,
      'overloaded',
      'Rate limits cannot be checked right now, so the request was not sent. Please retry shortly.',
      { code: 'rate_limiter_unavailable', headers: { 'retry-after': '1' } },
    );
  }
}

export class InternalError extends GatewayError {
  constructor(message = 'The server had an error while processing your request.') {
    super(500, 'server', message);
  }
}

/** Default error kind for an HTTP status, used when all we have is the status. */
export function kindForStatus(status: number): ErrorKind {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request';
    case 401:
      return 'authentication';
    case 403:
      return 'permission';
    case 404:
      return 'not_found';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit';
    case 504:
      return 'timeout';
    case 503:
    case 529:
      return 'overloaded';
    default:
      return status >= 500 ? 'server' : 'invalid_request';
  }
}
