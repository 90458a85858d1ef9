import { Logger, NotFoundException, type ArgumentsHost } from '@nestjs/common';
import type { RequestContext } from '../request-context';
import {
  InvalidRequestError,
  ModelNotFoundError,
  ProviderUnavailableError,
  UpstreamHttpError,
} from './gateway-errors';
import { GlobalExceptionFilter, envelopeForPath } from './global-exception.filter';

interface Recorded {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  ended: boolean;
}

function fakeHttp(
  req: { method: string; path: string; headers?: Record<string, string>; ctx?: RequestContext },
  headersSent = false,
): { host: ArgumentsHost; rec: Recorded } {
  const rec: Recorded = { headers: {}, ended: false };
  const res = {
    headersSent,
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
    end() {
      rec.ended = true;
      return res;
    },
  };
  const fullReq = { headers: {}, ...req };
  const host = {
    switchToHttp: () => ({ getRequest: () => fullReq, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  return { host, rec };
}

function ctx(): RequestContext {
  return { requestId: 'req_abc', startedAt: 0n };
}

describe('envelopeForPath', () => {
  it.each([
    ['/v1/messages', undefined, 'anthropic'],
    ['/v1/messages/count_tokens', undefined, 'anthropic'],
    ['/v1/messages/', undefined, 'anthropic'],
    ['/v1/messagesX', undefined, 'openai'],
    ['/v1/chat/completions', undefined, 'openai'],
    ['/v1/chat/completions', '2023-06-01', 'openai'],
    ['/v1/responses', undefined, 'openai'],
    ['/v1/models', undefined, 'openai'],
    ['/v1/models', '2023-06-01', 'anthropic'],
    ['/v1/models/claude-x', '2023-06-01', 'anthropic'],
    ['/v1/modelsX', '2023-06-01', 'openai'],
    ['/nope', '2023-06-01', 'openai'],
  ])('answers %s (anthropic-version %s) in the %s envelope', (path, version, envelope) => {
    expect(envelopeForPath(path, version)).toBe(envelope);
  });
});

describe('GlobalExceptionFilter', () => {
  const filter = new GlobalExceptionFilter();
  let logError: jest.SpyInstance;

  beforeEach(() => {
    logError = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    logError.mockRestore();
  });

  it('answers an unknown route with 404 in the OpenAI envelope', () => {
    const { host, rec } = fakeHttp({ method: 'GET', path: '/v2/whatever', ctx: ctx() });
    filter.catch(new NotFoundException(), host);
    expect(rec.status).toBe(404);
    expect(rec.body).toEqual({
      error: {
        message: 'Invalid URL (GET /v2/whatever)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    expect(logError).not.toHaveBeenCalled();
  });

  it('answers on /v1/messages in the Anthropic envelope with the request id', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/messages', ctx: ctx() });
    filter.catch(new InvalidRequestError('max_tokens: required', 'max_tokens'), host);
    expect(rec.status).toBe(400);
    expect(rec.body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: required' },
      request_id: 'req_abc',
    });
  });

  it('answers /v1/models with anthropic-version in the Anthropic envelope', () => {
    const { host, rec } = fakeHttp({
      method: 'GET',
      path: '/v1/models/nope',
      headers: { 'anthropic-version': '2023-06-01' },
      ctx: ctx(),
    });
    filter.catch(new ModelNotFoundError('nope'), host);
    expect(rec.status).toBe(404);
    expect(rec.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('sends the error headers', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/chat/completions', ctx: ctx() });
    filter.catch(new ProviderUnavailableError('no key'), host);
    expect(rec.status).toBe(503);
    expect(rec.headers['x-should-retry']).toBe('false');
  });

  it('sends retry-after of an upstream 429', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/chat/completions', ctx: ctx() });
    filter.catch(
      new UpstreamHttpError(429, 'rate_limit', 'slow down', { headers: { 'retry-after': '3' } }),
      host,
    );
    expect(rec.status).toBe(429);
    expect(rec.headers['retry-after']).toBe('3');
  });

  it('records the error code on the request context, or the status when there is none', () => {
    const a = ctx();
    filter.catch(new ModelNotFoundError('x'), fakeHttp({ method: 'GET', path: '/', ctx: a }).host);
    expect(a.errorCode).toBe('model_not_found');
    const b = ctx();
    filter.catch(new NotFoundException(), fakeHttp({ method: 'GET', path: '/', ctx: b }).host);
    expect(b.errorCode).toBe('404');
  });

  it('answers an unexpected error with a 500 that hides its text, and logs it', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/chat/completions', ctx: ctx() });
    const boom = new TypeError("Cannot read properties of undefined (reading 'secretField')");
    filter.catch(boom, host);
    expect(rec.status).toBe(500);
    expect(JSON.stringify(rec.body)).not.toContain('secretField');
    expect(rec.body).toMatchObject({ error: { type: 'server_error' } });
    expect(logError).toHaveBeenCalledTimes(1);
    // The log (not the client) gets the request id, the error and its stack.
    expect(logError.mock.calls[0][0]).toContain('req_abc');
    expect(logError.mock.calls[0][0]).toContain('secretField');
    expect(logError.mock.calls[0][1]).toBe(boom.stack);
  });

  it('only ends the response when a stream already started', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/messages', ctx: ctx() }, true);
    filter.catch(new InvalidRequestError('late'), host);
    expect(rec.ended).toBe(true);
    expect(rec.status).toBeUndefined();
    expect(rec.body).toBeUndefined();
  });

  it('works on a request without a context', () => {
    const { host, rec } = fakeHttp({ method: 'POST', path: '/v1/messages' });
    filter.catch(new InvalidRequestError('x'), host);
    expect(rec.status).toBe(400);
    expect(rec.body).not.toHaveProperty('request_id');
  });
});
