import {
  BadRequestException,
  HttpException,
  HttpStatus,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  GatewayError,
  InternalError,
  InvalidRequestError,
  ModelNotFoundError,
  PayloadTooLargeError,
  RouteNotFoundError,
} from './gateway-errors';
import { normalizeError } from './normalize-error';

describe('normalizeError', () => {
  it('returns a GatewayError unchanged and not unexpected', () => {
    const err = new ModelNotFoundError('x');
    expect(normalizeError(err, 'POST', '/v1/chat/completions')).toEqual({
      error: err,
      isUnexpected: false,
    });
    expect(normalizeError(err, 'POST', '/v1/chat/completions').error).toBe(err);
  });

  it('turns a Nest 404 into RouteNotFoundError naming the method and path', () => {
    const { error, isUnexpected } = normalizeError(
      new NotFoundException('Cannot GET /v1/nope'),
      'GET',
      '/v1/nope',
    );
    expect(error).toBeInstanceOf(RouteNotFoundError);
    expect(error.status).toBe(404);
    expect(error.kind).toBe('not_found');
    expect(error.message).toBe('Invalid URL (GET /v1/nope)');
    expect(isUnexpected).toBe(false);
  });

  it('keeps the status and message of another HttpException', () => {
    const { error, isUnexpected } = normalizeError(
      new BadRequestException('field x is wrong'),
      'POST',
      '/v1/x',
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      status: 400,
      kind: 'invalid_request',
      message: 'field x is wrong',
    });
    expect(isUnexpected).toBe(false);
  });

  it('uses a string response body as the message', () => {
    const { error } = normalizeError(
      new HttpException('Too Many Requests', HttpStatus.TOO_MANY_REQUESTS),
      'POST',
      '/v1/x',
    );
    expect(error).toMatchObject({ status: 429, kind: 'rate_limit', message: 'Too Many Requests' });
  });

  it('uses the message of an object response body', () => {
    const { error } = normalizeError(
      new HttpException({ message: 'custom body message', extra: 1 }, 422),
      'POST',
      '/v1/x',
    );
    expect(error).toMatchObject({
      status: 422,
      kind: 'invalid_request',
      message: 'custom body message',
    });
  });

  it('flags a 5xx HttpException as unexpected', () => {
    const { error, isUnexpected } = normalizeError(
      new ServiceUnavailableException('down'),
      'GET',
      '/x',
    );
    expect(error.status).toBe(503);
    expect(isUnexpected).toBe(true);
  });

  it('turns a body-parser parse failure into a 400 invalid_json', () => {
    const parseError = Object.assign(new SyntaxError('Unexpected token } in JSON'), {
      type: 'entity.parse.failed',
      status: 400,
    });
    const { error, isUnexpected } = normalizeError(parseError, 'POST', '/v1/chat/completions');
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_json', param: null });
    expect(error.message).not.toContain('Unexpected token');
    expect(isUnexpected).toBe(false);
  });

  it('turns a body-parser size failure into a 413 naming the limit', () => {
    const { error, isUnexpected } = normalizeError(
      { type: 'entity.too.large', status: 413, limit: 1024 },
      'POST',
      '/v1/messages',
    );
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({
      status: 413,
      kind: 'request_too_large',
      code: 'request_too_large',
    });
    expect(error.message).toContain('1024 bytes');
    expect(isUnexpected).toBe(false);
  });

  it('keeps the 4xx status of another body-parser failure', () => {
    const { error, isUnexpected } = normalizeError(
      { type: 'encoding.unsupported', status: 415 },
      'POST',
      '/v1/x',
    );
    expect(error.status).toBe(415);
    expect(error.message).toContain('encoding.unsupported');
    expect(isUnexpected).toBe(false);
  });

  it('turns an unknown Error into a 500 that does not leak its text', () => {
    const { error, isUnexpected } = normalizeError(
      new Error('ECONNRESET at db.internal:5432 password=hunter2'),
      'POST',
      '/v1/chat/completions',
    );
    expect(error).toBeInstanceOf(InternalError);
    expect(error.status).toBe(500);
    expect(error.kind).toBe('server');
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('db.internal');
    expect(error.message.length).toBeGreaterThan(0);
    expect(isUnexpected).toBe(true);
  });

  it.each([
    ['a string', 'boom'],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { oops: true }],
    ['an object with a 5xx status and a type', { type: 'weird', status: 500 }],
  ])('turns %s into an unexpected 500', (_what, value) => {
    const { error, isUnexpected } = normalizeError(value, 'GET', '/');
    expect(error.status).toBe(500);
    expect(isUnexpected).toBe(true);
  });

  it('treats any error carrying a 4xx status (e.g. a corrupt gzip body) as a client error', () => {
    const zlib = Object.assign(new Error('incorrect header check'), { status: 400 });
    const { error, isUnexpected } = normalizeError(zlib, 'POST', '/v1/messages');
    expect(isUnexpected).toBe(false);
    expect(error.status).toBe(400);
    expect(error.message).toContain('malformed or wrongly encoded body');
  });

  it('answers 400, not 500, when a body is nested deeper than the stack allows', () => {
    const { error, isUnexpected } = normalizeError(
      new RangeError('Maximum call stack size exceeded'),
      'POST',
      '/v1/chat/completions',
    );
    expect(isUnexpected).toBe(false);
    expect(error).toMatchObject({ status: 400, code: 'invalid_json' });
  });
});
