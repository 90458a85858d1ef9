import { BadRequestException, Logger, type ArgumentsHost } from '@nestjs/common';
import {
  AuthenticationError,
  InvalidRequestError,
  UpstreamHttpError,
} from '../../common/errors/gateway-errors';
import type { RequestContext } from '../../common/request-context';
import { OpenAiExceptionFilter } from './openai-exception.filter';

interface Recorded {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  ended: boolean;
}

function fakeHttp(
  path: string,
  headersSent = false,
): { host: ArgumentsHost; rec: Recorded; ctx: RequestContext } {
  const rec: Recorded = { headers: {}, ended: false };
  const ctx: RequestContext = { requestId: 'req_1', startedAt: 0n };
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
  const req = { method: 'POST', path, headers: { 'anthropic-version': '2023-06-01' }, ctx };
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ArgumentsHost;
  return { host, rec, ctx };
}

describe('OpenAiExceptionFilter', () => {
  const filter = new OpenAiExceptionFilter();

  it('renders a GatewayError in the OpenAI envelope with its status', () => {
    const { host, rec, ctx } = fakeHttp('/v1/chat/completions');
    filter.catch(
      new InvalidRequestError("Invalid value for 'temperature'.", 'temperature', 'invalid_value'),
      host,
    );
    expect(rec.status).toBe(400);
    expect(rec.body).toEqual({
      error: {
        message: "Invalid value for 'temperature'.",
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_value',
      },
    });
    expect(ctx.errorCode).toBe('invalid_value');
  });

  it('uses the OpenAI envelope whatever the path and headers', () => {
    const { host, rec } = fakeHttp('/v1/messages');
    filter.catch(new AuthenticationError('Incorrect API key provided.'), host);
    expect(rec.status).toBe(401);
    expect(rec.body).toEqual({
      error: {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
  });

  it('renders a Nest HttpException through normalizeError', () => {
    const { host, rec } = fakeHttp('/v1/chat/completions');
    filter.catch(new BadRequestException('nope'), host);
    expect(rec.status).toBe(400);
    expect(rec.body).toMatchObject({ error: { message: 'nope', type: 'invalid_request_error' } });
  });

  it('sends the retry headers of an upstream error', () => {
    const { host, rec } = fakeHttp('/v1/chat/completions');
    filter.catch(
      new UpstreamHttpError(429, 'rate_limit', 'slow', {
        code: 'rate_limit_exceeded',
        headers: { 'retry-after': '20' },
      }),
      host,
    );
    expect(rec.status).toBe(429);
    expect(rec.headers).toEqual({ 'retry-after': '20' });
    expect(rec.body).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
    });
  });

  it('hides and logs an unexpected error', () => {
    const logError = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const { host, rec } = fakeHttp('/v1/chat/completions');
      filter.catch(new Error('internal detail 42'), host);
      expect(rec.status).toBe(500);
      expect(JSON.stringify(rec.body)).not.toContain('internal detail');
      expect(logError).toHaveBeenCalledTimes(1);
    } finally {
      logError.mockRestore();
    }
  });

  it('ends a response whose headers were already sent without writing a body', () => {
    const { host, rec } = fakeHttp('/v1/chat/completions', true);
    filter.catch(new InvalidRequestError('late'), host);
    expect(rec).toEqual({ headers: {}, ended: true });
  });
});
