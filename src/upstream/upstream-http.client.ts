import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Agent, Dispatcher, errors as undiciErrors } from 'undici';
import {
  ClientClosedRequestError,
  GatewayError,
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamTimeoutError,
  kindForStatus,
} from '../common/errors/gateway-errors';
import type { AllConfig } from '../config';

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
}

export type UpstreamResponse = Dispatcher.ResponseData;

const MAX_ERROR_BODY = 64 * 1024;

/**
 * The one HTTP client for every upstream: an undici Agent with keep-alive pools per
 * origin, uncapped (or operator-capped) connections so concurrent streams never queue,
 * and timeouts for connect, response headers and body silence.
 */
@Injectable()
export class UpstreamHttpClient implements OnApplicationShutdown {
  private readonly agent: Agent;

  constructor(config: ConfigService<AllConfig, true>) {
    const c = config.get('upstream', { infer: true });
    this.agent = new Agent({
      connections: c.maxConnections === 0 ? null : c.maxConnections,
      keepAliveTimeout: c.keepAliveTimeoutMs,
      headersTimeout: c.headersTimeoutMs,
      bodyTimeout: c.bodyTimeoutMs,
      connect: { timeout: c.connectTimeoutMs },
    });
  }

  /** Sends the request; resolves with any HTTP status, rejects with typed errors. */
  async send(req: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      return await this.agent.request({
        origin: new URL(req.url).origin,
        path: req.url.slice(req.url.indexOf('/', req.url.indexOf('//') + 2)),
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: req.signal,
      });
    } catch (e) {
      throw mapTransportError(e, req.signal);
    }
  }

  /** Sends the request and throws UpstreamHttpError on a non-2xx status. */
  async sendOk(req: UpstreamRequest, providerName: string): Promise<UpstreamResponse> {
    const res = await this.send(req);
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return res;
    }
    const error = await upstreamHttpError(res, providerName);
    // An upstream may quote the credential it was sent; never hand that to a client.
    for (const secret of credentialsOf(req.headers)) {
      if (error.message.includes(secret)) {
        throw new UpstreamHttpError(
          error.status,
          error.kind,
          error.message.split(secret).join('[redacted]'),
          {
            param: error.param,
            code: error.code,
            headers: error.headers,
          },
        );
      }
    }
    throw error;
  }

  /**
   * Runs after the HTTP server has closed, i.e. after in-flight streams finished or were
   * cut at SHUTDOWN_TIMEOUT_MS; anything still open upstream is destroyed, not awaited.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.destroy();
  }
}

function credentialsOf(headers: Record<string, string>): string[] {
  const out: string[] = [];
  const auth = headers.authorization;
  if (auth !== undefined) {
    out.push(auth.replace(/^Bearer\s+/i, ''));
  }
  if (headers['x-api-key'] !== undefined) {
    out.push(headers['x-api-key']);
  }
  return out.filter((s) => s.length >= 8);
}

/** Maps undici/network failures to 502/504, and our own abort to ClientAbortedError. */
export function mapTransportError(e: unknown, signal?: AbortSignal): Error {
  if (signal?.aborted) {
    return new ClientClosedRequestError();
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

interface UpstreamErrorInfo {
  message?: string;
  code?: string;
  param?: string;
}

/** Pulls message/code/param out of an OpenAI or Anthropic error body. */
function readErrorBody(text: string): UpstreamErrorInfo {
  try {
    const body = JSON.parse(text) as {
      error?: { message?: unknown; code?: unknown; param?: unknown } | string;
      message?: unknown;
    };
    if (typeof body.error === 'object' && body.error !== null) {
      const { message, code, param } = body.error;
      return {
        message: typeof message === 'string' ? message : undefined,
        code: typeof code === 'string' ? code : undefined,
        param: typeof param === 'string' ? param : undefined,
      };
    }
    if (typeof body.error === 'string') {
      return { message: body.error };
    }
    if (typeof body.message === 'string') {
      return { message: body.message };
    }
  } catch {
    // not JSON: the caller falls back to the raw text
  }
  return {};
}

/**
 * Reads an upstream error response into a typed error that keeps its status class:
 * 4xx stay (the client can act on them), auth failures of the gateway's own provider
 * key become 502 (the client's key was fine), 5xx become 502; retry hints are kept.
 */
export async function upstreamHttpError(
  res: UpstreamResponse,
  providerName: string,
): Promise<GatewayError> {
  let text = '';
  try {
    text = (await res.body.text()).slice(0, MAX_ERROR_BODY);
  } catch {
    // body unreadable: report the status alone
  }
  const headers: Record<string, string> = {};
  for (const name of ['retry-after', 'retry-after-ms', 'x-should-retry']) {
    const value = res.headers[name];
    if (typeof value === 'string') {
      headers[name] = value;
    }
  }
  return errorForStatus(res.statusCode, text, headers, providerName, `HTTP ${res.statusCode}`);
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
function statusOfErrorBody(text: string): number | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const outer = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const inner =
    typeof outer.error === 'object' && outer.error !== null
      ? (outer.error as Record<string, unknown>)
      : {};
  for (const value of [inner.code, inner.status, outer.code, outer.status]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 600) {
      return value;
    }
  }
  for (const value of [inner.type, outer.type]) {
    if (typeof value === 'string' && STATUS_OF_TYPE[value] !== undefined) {
      return STATUS_OF_TYPE[value];
    }
  }
  return undefined;
}

/**
 * An error body that came with a 2xx status (e.g. instead of the event stream that was
 * asked for): the error it describes, with the status class the body states (502 when it
 * states none); undefined when the text is not an error body.
 */
export function upstreamErrorFromBody(
  text: string,
  providerName: string,
): GatewayError | undefined {
  if (readErrorBody(text).message === undefined) {
    return undefined;
  }
  const status = statusOfErrorBody(text);
  return errorForStatus(
    status ?? 502,
    text,
    {},
    providerName,
    status === undefined ? 'an error body with a 2xx status' : `error ${status} in a 2xx body`,
  );
}

function errorForStatus(
  status: number,
  text: string,
  headers: Record<string, string>,
  providerName: string,
  statusLabel: string,
): GatewayError {
  const info = readErrorBody(text);
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
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' failed (${statusLabel}): ${upstreamSays}`,
    { code: 'upstream_error', headers },
  );
}
