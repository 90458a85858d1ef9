import { HttpException } from '@nestjs/common';
import {
  GatewayError,
  InternalError,
  InvalidRequestError,
  PayloadTooLargeError,
  RouteNotFoundError,
  kindForStatus,
} from './gateway-errors';

/** body-parser, raw-body and zlib errors carry an HTTP status; `type` is set by body-parser. */
interface StatusError {
  type?: string;
  status: number;
  limit?: number;
}

function isStatusError(e: unknown): e is StatusError {
  return (
    typeof e === 'object' && e !== null && typeof (e as { status?: unknown }).status === 'number'
  );
}

/**
 * Turns anything thrown while serving a request into a GatewayError, so that every
 * envelope renderer deals with one type. Unknown errors become a generic 500 whose
 * message reveals nothing internal; `isUnexpected` tells the caller to log them.
 */
export function normalizeError(
  exception: unknown,
  method: string,
  path: string,
): { error: GatewayError; isUnexpected: boolean } {
  if (exception instanceof GatewayError) {
    return { error: exception, isUnexpected: false };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) {
      return { error: new RouteNotFoundError(method, path), isUnexpected: false };
    }
    const body = exception.getResponse();
    const message =
      typeof body === 'string'
        ? body
        : typeof body === 'object' && body !== null && 'message' in body
          ? String(body.message)
          : exception.message;
    return {
      error: new GatewayError(status, kindForStatus(status), message),
      isUnexpected: status >= 500,
    };
  }
  if (exception instanceof RangeError && /call stack/i.test(exception.message)) {
    return {
      error: new InvalidRequestError(
        'The request body is nested too deeply.',
        null,
        'invalid_json',
      ),
      isUnexpected: false,
    };
  }
  if (isStatusError(exception)) {
    if (exception.type === 'entity.too.large') {
      return { error: new PayloadTooLargeError(exception.limit ?? 0), isUnexpected: false };
    }
    if (exception.type === 'entity.parse.failed') {
      return {
        error: new InvalidRequestError(
          'We could not parse the JSON body of your request. The body must be valid JSON.',
          null,
          'invalid_json',
        ),
        isUnexpected: false,
      };
    }
    if (exception.status >= 400 && exception.status < 500) {
      return {
        error: new GatewayError(
          exception.status,
          kindForStatus(exception.status),
          `The request body could not be read (${exception.type ?? 'malformed or wrongly encoded body'}).`,
        ),
        isUnexpected: false,
      };
    }
  }
  return { error: new InternalError(), isUnexpected: true };
}
