import { headerValue } from '../common/http/header-value';
import type { Dispatcher } from 'undici';
import type { StreamFraming } from '../catalog/provider-kind';
import { own, setOwn } from '../common/own';
import { type GatewayError, UpstreamHttpError } from '../common/errors/gateway-errors';
import {
  errorForStatus,
  invalidAnswerError,
  mapTransportError,
  upstreamErrorFromBody,
  upstreamTooLargeError,
} from './upstream-errors';
import { exceedsJsonDepth } from '../common/validation/json-depth';
import type { CallSignal } from './call-signal';

const MAX_ANSWER_DEPTH = 128;

export type UpstreamResponse = Dispatcher.ResponseData;

/** How much of an error body is read to explain it; the rest is discarded. */
const MAX_ERROR_BODY = 64 * 1024;
/** How much of an unexpected 2xx body is read to explain it. */
const MAX_EXPLAINED_BODY = 16 * 1024;
/** Retry hints of an error answer that the client gets too. */
const RETRY_HEADERS = ['retry-after', 'retry-after-ms', 'x-should-retry'] as const;

/**
 * Which API's answer a 2xx non-streamed body must be: the three generation APIs,
 * `count_tokens`, or `object` (any JSON object, e.g. a stored resource or a deletion).
 */
export type AnswerKind = 'chat_completions' | 'responses' | 'messages' | 'count_tokens' | 'object';

/**
 * A provider's own check that a parsed answer is one of its API (undefined when it is, else
 * what is missing), for APIs that are not in {@link AnswerKind}.
 */
export type AnswerCheck = (value: Record<string, unknown>) => string | undefined;

/**
 * Why a parsed answer is not an answer of its API (undefined when it is one): only the
 * fields a translator needs to produce content are required, so that a sparse but real
 * answer (vLLM, llama.cpp) still passes while `{}` or a stray object fails.
 */
const MISSING: Record<AnswerKind, (value: Record<string, unknown>) => string | undefined> = {
  chat_completions: (v) => {
    const first: unknown = Array.isArray(v.choices) ? v.choices[0] : undefined;
    const message =
      typeof first === 'object' && first !== null
        ? (first as { message?: unknown }).message
        : undefined;
    return typeof message === 'object' && message !== null
      ? undefined
      : 'a chat completion without choices[0].message';
  },
  responses: (v) => (Array.isArray(v.output) ? undefined : 'a response without an output list'),
  messages: (v) => (Array.isArray(v.content) ? undefined : 'a message without a content list'),
  count_tokens: (v) =>
    typeof v.input_tokens === 'number' ? undefined : 'a token count without input_tokens',
  object: () => undefined,
};

/**
 * Parses a 2xx non-streamed body and checks that it is an answer of `kind`. Anything else
 * is the upstream's failure, never a 200 with empty content: an error body keeps its
 * message (and the status class it states; 502 otherwise), and any other body (not JSON,
 * not an object, required fields missing) is a 502 `upstream_error` naming the provider.
 * Error messages quote upstream text: redact them before they leave the gateway.
 */
export function parseUpstreamAnswer(
  body: Buffer | string,
  providerName: string,
  kind: AnswerKind | AnswerCheck,
  redact: (text: string) => string = (text) => text,
): Record<string, unknown> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  // Parsing takes any depth, but re-serialising the answer (model rewrite, encoders) would
  // overflow the stack: an answer no real API gives is the upstream's failure.
  if (exceedsJsonDepth(typeof body === 'string' ? Buffer.from(body) : body, MAX_ANSWER_DEPTH)) {
    throw invalidAnswerError(providerName, `JSON nested deeper than ${MAX_ANSWER_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidAnswerError(providerName, 'a body that is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidAnswerError(providerName, 'JSON that is not an object');
  }
  const answer = value as Record<string, unknown>;
  // A Responses object always has `error` (null unless it failed): only a truthy one counts.
  if (answer.error) {
    throw (
      upstreamErrorFromBody(redact(text), providerName) ??
      invalidAnswerError(providerName, 'an error without a message')
    );
  }
  const missing = (typeof kind === 'function' ? kind : MISSING[kind])(answer);
  if (missing !== undefined) {
    throw invalidAnswerError(providerName, missing);
  }
  return answer;
}

/** The content types of a stream, by framing. */
const STREAM_TYPES: Record<StreamFraming, RegExp> = {
  sse: /text\/event-stream/i,
  'json-lines': /application\/(x-)?(nd)?json(l)?/i,
  'aws-eventstream': /application\/vnd\.amazon\.eventstream/i,
};

/** True when the answer is a stream (a missing content type is given the benefit). */
export function isEventStream(res: UpstreamResponse, framing: StreamFraming = 'sse'): boolean {
  const text = headerValue(res.headers['content-type']);
  return text === undefined || text === '' || STREAM_TYPES[framing].test(text);
}

/**
 * For a streamed request: undefined when the 2xx answer is an event stream, else the
 * error explaining it, from a bounded part of the body, before anything reached the
 * client. A JSON error body keeps its message (and its status class when it states one);
 * anything else is a 502 `upstream_error` naming the provider and the content type.
 */
export async function notAnEventStream(
  res: UpstreamResponse,
  providerName: string,
  redact: (text: string) => string,
  framing: StreamFraming = 'sse',
): Promise<GatewayError | undefined> {
  if (isEventStream(res, framing)) {
    return undefined;
  }
  const type = String(res.headers['content-type']);
  const text = redact(await readBounded(res, MAX_EXPLAINED_BODY));
  const fromBody = upstreamErrorFromBody(text, providerName);
  if (fromBody) {
    return fromBody;
  }
  const snippet = text.trim().slice(0, 200);
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' answered a streamed request with '${type}' instead of an event stream${snippet ? `: ${snippet}` : '.'}`,
    { code: 'upstream_error' },
  );
}

/**
 * Reads an upstream error response (a bounded part of its body) into a typed error that
 * keeps its status class; see {@link errorForStatus}.
 */
export async function upstreamHttpError(
  res: UpstreamResponse,
  providerName: string,
  redact: (text: string) => string,
): Promise<GatewayError> {
  // Redacted whole, before any part of it is cut for a message: a cut could leave the
  // head of a secret that whole-secret matching no longer finds.
  const text = redact(await readBounded(res, MAX_ERROR_BODY));
  const headers: Record<string, string> = {};
  for (const name of RETRY_HEADERS) {
    const value = own(res.headers, name);
    if (typeof value === 'string') {
      setOwn(headers, name, value);
    }
  }
  return errorForStatus(res.statusCode, text, headers, providerName, `HTTP ${res.statusCode}`);
}

/**
 * The whole body, refused (and the connection dropped, which aborts the upstream call)
 * as soon as it is known to exceed `limit` bytes: from `content-length` before reading,
 * else while reading, so memory stays bounded by the cap. Read with plain listeners and
 * one promise: an async iterator over the stream cost a promise per chunk and an
 * end-of-stream watcher per answer (about 2% of the CPU profile under load).
 */
export function readCapped(
  res: UpstreamResponse,
  limit: number,
  signal: CallSignal,
  providerName: string,
): Promise<Buffer> {
  const body = res.body;
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    body.destroy();
    return Promise.reject(upstreamTooLargeError(providerName, 'answer', limit));
  }
  if (body.destroyed) {
    // Its 'close' has been or is about to be emitted: waiting for it would hang.
    return Promise.reject(mapTransportError(prematureClose(), signal));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: Error | undefined): void => {
      if (settled) {
        return;
      }
      settled = true;
      if (error !== undefined) {
        reject(error);
      } else {
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        settle(upstreamTooLargeError(providerName, 'answer', limit));
        body.destroy();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(undefined);
    const onError = (e: unknown): void => settle(mapTransportError(e, signal));
    // Destroyed without an error (an abort may do that): the answer is cut short.
    const onClose = (): void => {
      // It closes after every end too: an error (two stack traces) only when it means one.
      if (!settled) {
        settle(mapTransportError(prematureClose(), signal));
      }
    };
    // The listeners stay: destroying the body over the cap makes undici emit an abort
    // error afterwards, which must find a listener (settle ignores it).
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

/** What a body that closed before its end reports: the code node's stream helpers use. */
function prematureClose(): Error {
  return Object.assign(new Error('the upstream answer ended early'), {
    code: 'ERR_STREAM_PREMATURE_CLOSE',
  });
}

/** Up to `limit` bytes of the body as text; the body is then discarded (and the socket freed). */
async function readBounded(res: UpstreamResponse, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        break;
      }
    }
  } catch {
    // unreadable: explain with what was read
  } finally {
    if (!res.body.destroyed) {
      res.body.destroy();
    }
  }
  // A cut inside a UTF-8 sequence decodes to U+FFFD at the end: leave it out.
  return Buffer.concat(chunks)
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
