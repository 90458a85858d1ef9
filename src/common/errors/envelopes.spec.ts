import { anthropicErrorBody, errorBody, openAiErrorBody } from './envelopes';
import {
  AuthenticationError,
  GatewayError,
  InvalidRequestError,
  ModelNotFoundError,
  kindForStatus,
} from './gateway-errors';

function errorWithStatus(status: number): GatewayError {
  return new GatewayError(status, kindForStatus(status), `status ${status}`);
}

describe('openAiErrorBody', () => {
  it('has exactly message, type, param and code', () => {
    const body = openAiErrorBody(
      new InvalidRequestError('bad temp', 'temperature', 'invalid_value'),
    );
    expect(body).toEqual({
      error: {
        message: 'bad temp',
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_value',
      },
    });
  });

  it('keeps null param and code as null, not missing', () => {
    const body = openAiErrorBody(new GatewayError(500, 'server', 'x'));
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error.param).toBeNull();
    expect(body.error.code).toBeNull();
  });

  it('reports a bad key as invalid_request_error with code invalid_api_key, as OpenAI does', () => {
    expect(openAiErrorBody(new AuthenticationError('Incorrect API key provided.')).error).toEqual({
      message: 'Incorrect API key provided.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
  });

  it.each([
    [400, 'invalid_request_error'],
    [403, 'permission_error'],
    [404, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'server_error'],
    [503, 'server_error'],
    [504, 'server_error'],
  ])('uses the OpenAI type for status %i: %s', (status, type) => {
    expect(openAiErrorBody(errorWithStatus(status)).error.type).toBe(type);
  });
});

describe('anthropicErrorBody', () => {
  it('has type error, the error type and message, and the request id', () => {
    expect(anthropicErrorBody(new ModelNotFoundError('claude-x'), 'req_123')).toEqual({
      type: 'error',
      error: {
        type: 'not_found_error',
        message: "The model 'claude-x' does not exist or you do not have access to it.",
      },
      request_id: 'req_123',
    });
  });

  it('omits request_id when there is none', () => {
    expect(anthropicErrorBody(new InvalidRequestError('x'))).not.toHaveProperty('request_id');
  });

  it('carries details only when the error has them', () => {
    expect(anthropicErrorBody(new InvalidRequestError('x')).error).not.toHaveProperty('details');
    const details = { error_code: 'thread_unsupported_request', unsupported: ['thread'] };
    const err = new GatewayError(400, 'invalid_request', 'no', { details });
    expect(anthropicErrorBody(err).error.details).toEqual(details);
    expect(openAiErrorBody(err).error).not.toHaveProperty('details');
  });

  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('uses the Anthropic type for status %i: %s', (status, type) => {
    expect(anthropicErrorBody(errorWithStatus(status)).error.type).toBe(type);
  });
});

describe('errorBody', () => {
  it('picks the envelope by name', () => {
    const err = new InvalidRequestError('x', 'model');
    expect(errorBody('openai', err, 'req_1')).toEqual(openAiErrorBody(err));
    expect(errorBody('anthropic', err, 'req_1')).toEqual(anthropicErrorBody(err, 'req_1'));
  });
});
