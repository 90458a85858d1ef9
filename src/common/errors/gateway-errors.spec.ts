import {
  AuthenticationError,
  ClientClosedRequestError,
  GatewayError,
  InternalError,
  InvalidRequestError,
  MissingSystemPromptError,
  ProviderUnavailableError,
  UpstreamConnectionError,
  UpstreamTimeoutError,
  kindForStatus,
} from './gateway-errors';

describe('kindForStatus', () => {
  it.each([
    [400, 'invalid_request'],
    [422, 'invalid_request'],
    [401, 'authentication'],
    [403, 'permission'],
    [404, 'not_found'],
    [409, 'invalid_request'],
    [413, 'request_too_large'],
    [429, 'rate_limit'],
    [500, 'server'],
    [502, 'server'],
    [503, 'overloaded'],
    [504, 'timeout'],
    [529, 'overloaded'],
  ])('maps %i to %s', (status, kind) => {
    expect(kindForStatus(status)).toBe(kind);
  });
});

describe('GatewayError subclasses', () => {
  it('default param and code to null and headers to {}', () => {
    const err = new GatewayError(418, 'invalid_request', 'teapot');
    expect(err).toMatchObject({ status: 418, param: null, code: null, headers: {} });
    expect(err.name).toBe('GatewayError');
    expect(err).toBeInstanceOf(Error);
  });

  it('are named after their class', () => {
    expect(new InvalidRequestError('x').name).toBe('InvalidRequestError');
    expect(new InternalError().name).toBe('InternalError');
  });

  it('carry their status, kind and code', () => {
    expect(new InvalidRequestError('bad', 'temperature', 'invalid_value')).toMatchObject({
      status: 400,
      kind: 'invalid_request',
      param: 'temperature',
      code: 'invalid_value',
    });
    expect(new MissingSystemPromptError('m', 'system')).toMatchObject({
      status: 400,
      param: 'system',
      code: 'missing_system_prompt',
    });
    expect(new AuthenticationError('no')).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(new ProviderUnavailableError('x')).toMatchObject({
      status: 503,
      headers: { 'x-should-retry': 'false' },
    });
    expect(new UpstreamConnectionError('x')).toMatchObject({
      status: 502,
      code: 'upstream_unavailable',
    });
    expect(new UpstreamTimeoutError('x')).toMatchObject({ status: 504, kind: 'timeout' });
    expect(new ClientClosedRequestError()).toMatchObject({ status: 499 });
  });

  it('keep the cause they are given', () => {
    const cause = new Error('root');
    expect(new UpstreamConnectionError('x', cause).cause).toBe(cause);
    expect(new InvalidRequestError('x').cause).toBeUndefined();
  });
});
