import { errors as undiciErrors } from 'undici';
import { own } from '../common/own';
import {
  ClientClosedRequestError,
  GatewayError,
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamTimeoutError,
  kindForStatus,
} from '../common/errors/gateway-errors';
import type { CallSignal } from './call-signal';

/**
 * Upstream failures as typed errors. Pure: no I/O here (upstream-body.ts reads bodies);
 * every message that quotes upstream text is redacted by the caller (UpstreamHttpClient,
 * canonicalCall) before it can reach a client.
 */

/** Anthropic's "overloaded" status: kept as is, since the SDKs give it its own class. */
const OVERLOADED = 529;

/**
 * Maps undici/network failures to 502/504, and our own abort to ClientClosedRequestError
 * (or to the GatewayError it was aborted with, e.g. a deadline's timeout).
 */
export function mapTransportError(e: unknown, signal?: CallSignal): Error {
  if (signal?.aborted) {
    // A deadline aborts with its own typed error as the reason; the client's going away does not.
    return signal.reason instanceof GatewayError ? signal.reason : new ClientClosedRequestError();
  }
  if (e instanceof GatewayError) {
    return e;
  }
  if (
    e instanceof undiciErrors.HeadersTimeoutError ||
    e instanceof undiciErrors.BodyTimeoutError ||
    e instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new UpstreamTimeoutError(`The upstream did not answer in time (${e.code}).`, e);
  }
  const code = (e as { code?: string }).code ?? (e as Error).name;
  return new UpstreamConnectionError(`The upstream could not be reached (${code}).`, e);
}

/** A non-streamed answer, or one stream event, went over its configured size cap. */
export function upstreamTooLargeError(
  providerName: string,
  what: 'answer' | 'stream event',
  limitBytes: number,
): UpstreamHttpError {
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' sent an ${what === 'answer' ? 'answer' : 'event'} larger than the gateway accepts (${limitBytes} bytes); the call was aborted.`,
    { code: 'upstream_response_too_large' },
  );
}

/** A relayed stream carried an event that is not JSON (a client SDK would throw on it). */
export function malformedEventError(providerName: string): UpstreamHttpError {
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' sent a stream event that is not valid JSON.`,
    { code: 'upstream_malformed_event' },
  );
}

/** A 2xx body that is not an answer of the API that was called. */
export function invalidAnswerError(providerName: string, what: string): UpstreamHttpError {
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' answered with ${what}.`,
    { code: 'upstream_error' },
  );
}

interface UpstreamErrorInfo {
  message?: string;
  code?: string;
  param?: string;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // not JSON: callers fall back to the raw text
  }
}

/** Pulls message/code/param out of an OpenAI or Anthropic error body. */
const CODE_TOKEN = /^[\w.-]{1,64}$/;

function readErrorBody(body: unknown): UpstreamErrorInfo {
  const outer = record(body);
  if (outer === undefined) {
    return {};
  }
  const inner = record(outer.error);
  if (inner !== undefined) {
    const { message, code, param } = inner;
    return {
      message: typeof message === 'string' ? message : undefined,
      // A code is a short token; anything else is upstream text that would reach clients
      // and every access-log line (and could quote a credential), so it is dropped.
      code: typeof code === 'string' && CODE_TOKEN.test(code) ? code : undefined,
      param: typeof param === 'string' ? param : undefined,
    };
  }
  if (typeof outer.error === 'string') {
    return { message: outer.error };
  }
  return typeof outer.message === 'string' ? { message: outer.message } : {};
}

/** Error `type` names of the OpenAI and Anthropic envelopes, as the HTTP status they go with. */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  server_error: 500,
  overloaded_error: 529,
};

/** The HTTP status an error body states: a numeric `code`/`status` (vLLM), or its `type`. */
function statusOfErrorBody(body: unknown): number | undefined {
  const outer = record(body) ?? {};
  const inner = record(outer.error) ?? {};
  for (const value of [inner.code, inner.status, outer.code, outer.status]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 600) {
      return value;
    }
  }
  for (const value of [inner.type, outer.type]) {
    const status = typeof value === 'string' ? own(STATUS_OF_TYPE, value) : undefined;
    if (status !== undefined) {
      return status;
    }
  }
  return undefined;
}

/**
 * An error body that came with a 2xx status (instead of the answer or the event stream
 * that was asked for): the error it describes, with the status class the body states
 * (502 when it states none); undefined when the body is not an error body. `parsed` is
 * the body already parsed, when the caller has it.
 */
export function upstreamErrorFromBody(
  text: string,
  providerName: string,
  parsed: unknown = parseJson(text),
): GatewayError | undefined {
  if (readErrorBody(parsed).message === undefined) {
    return undefined;
  }
  const status = statusOfErrorBody(parsed);
  return errorForStatus(
    status ?? 502,
    text,
    {},
    providerName,
    status === undefined ? 'an error body with a 2xx status' : `error ${status} in a 2xx body`,
    parsed,
  );
}

/**
 * An upstream error status and body as a typed error that keeps its status class:
 * 4xx stay (the client can act on them), auth failures of the gateway's own provider
 * key become 502 (the client's key was fine), 529 stays an overloaded 529, other 5xx
 * become 502; retry hints are kept.
 */
export function errorForStatus(
  status: number,
  text: string,
  headers: Record<string, string>,
  providerName: string,
  statusLabel: string,
  parsed: unknown = parseJson(text),
): GatewayError {
  const info = readErrorBody(parsed);
  const upstreamSays = info.message ?? (text.trim().slice(0, 500) || `HTTP ${status}`);
  if (status === 401 || status === 403) {
    return new UpstreamHttpError(
      502,
      'server',
      // The upstream's text may quote part of the gateway's own key: keep it out.
      `The upstream provider '${providerName}' rejected the gateway's credentials (${statusLabel}).`,
      { code: 'upstream_auth_failed' },
    );
  }
  if (status >= 400 && status < 500) {
    return new UpstreamHttpError(status, kindForStatus(status), upstreamSays, {
      code: info.code ?? (status === 429 ? 'rate_limit_exceeded' : null),
      param: info.param ?? null,
      headers,
    });
  }
  const message = `The upstream provider '${providerName}' failed (${statusLabel}): ${upstreamSays}`;
  if (status === OVERLOADED) {
    return new UpstreamHttpError(OVERLOADED, 'overloaded', message, {
      code: 'upstream_overloaded',
      headers,
    });
  }
  return new UpstreamHttpError(502, 'server', message, { code: 'upstream_error', headers });
}
