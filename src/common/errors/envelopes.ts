import type { ErrorKind, GatewayError } from './gateway-errors';

/** The two error body shapes a client may expect. */
export type ErrorEnvelope = 'openai' | 'anthropic';

const OPENAI_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  // OpenAI reports a bad key as an invalid_request_error with code invalid_api_key.
  authentication: 'invalid_request_error',
  permission: 'permission_error',
  not_found: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  server: 'server_error',
  overloaded: 'server_error',
  timeout: 'server_error',
};

const ANTHROPIC_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  request_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  server: 'api_error',
  overloaded: 'overloaded_error',
  timeout: 'timeout_error',
};

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; details?: Record<string, unknown> };
  request_id?: string;
}

export function openAiErrorBody(err: GatewayError): OpenAiErrorBody {
  return {
    error: { message: err.message, type: OPENAI_TYPES[err.kind], param: err.param, code: err.code },
  };
}

export function anthropicErrorBody(err: GatewayError, requestId?: string): AnthropicErrorBody {
  const body: AnthropicErrorBody = {
    type: 'error',
    error: { type: ANTHROPIC_TYPES[err.kind], message: err.message },
  };
  if (err.details !== undefined) {
    body.error.details = err.details;
  }
  if (requestId !== undefined) {
    body.request_id = requestId;
  }
  return body;
}

export function errorBody(
  envelope: ErrorEnvelope,
  err: GatewayError,
  requestId?: string,
): OpenAiErrorBody | AnthropicErrorBody {
  return envelope === 'openai' ? openAiErrorBody(err) : anthropicErrorBody(err, requestId);
}
