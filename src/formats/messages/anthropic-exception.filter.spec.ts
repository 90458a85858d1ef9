import type { ArgumentsHost } from '@nestjs/common';
import {
  AuthenticationError,
  InvalidRequestError,
  UpstreamHttpError,
} from '../../common/errors/gateway-errors';
import type { RequestContext } from '../../common/request-context';
import { AnthropicExceptionFilter } from './anthropic-exception.filter';

interface Recorded {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
}

function fakeHttp(): { host: ArgumentsHost; rec: Recorded } {
  const rec: Recorded = { headers: {} };
  const ctx: RequestContext = { requestId: 'req_1', startedAt: 0n };
  const res = {
    headersSent: false,
    status(code: number) {
      rec.status = code;
      return res;
    },
    setHeader(name: string, value: string) {
      rec.headers[name.toLowerCase()] = value;
      return res;
    },
    json(body: unknown) {
      rec.body = body;
      return res;
    },
  };
  // No anthropic-version: the filter, not the headers, decides the envelope.
  const req = { method: 'POST', path: '/v1/messages', headers: {}, ctx };
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  return { host, rec };
}

describe('AnthropicExceptionFilter', () => {
  const filter = new AnthropicExceptionFilter();

  it.each([
    [
      new InvalidRequestError('max_tokens: Field required', 'max_tokens'),
      400,
      'invalid_request_error',
    ],
    [new AuthenticationError('Incorrect API key provided.'), 401, 'authentication_error'],
    [new UpstreamHttpError(529, 'overloaded', 'Overloaded'), 529, 'overloaded_error'],
  ])('renders %p in the Anthropic envelope with its status', (error, status, type) => {
    const { host, rec } = fakeHttp();
    filter.catch(error, host);
    expect(rec.status).toBe(status);
    expect(rec.body).toEqual({
      type: 'error',
      error: { type, message: error.message },
      request_id: 'req_1',
    });
  });

  it('sends the retry headers of an upstream error', () => {
    const { host, rec } = fakeHttp();
    filter.catch(
      new UpstreamHttpError(429, 'rate_limit', 'slow', { headers: { 'retry-after': '20' } }),
      host,
    );
    expect(rec.status).toBe(429);
    expect(rec.headers).toEqual({ 'retry-after': '20' });
    expect(rec.body).toMatchObject({ error: { type: 'rate_limit_error' } });
  });
});
