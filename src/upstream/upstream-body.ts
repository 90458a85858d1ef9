import { type GatewayError, UpstreamHttpError } from '../common/errors/gateway-errors';
import { type UpstreamResponse, upstreamErrorFromBody } from './upstream-http.client';

/** How much of an unexpected body is read to explain it; the rest is discarded. */
const MAX_EXPLAINED_BODY = 16 * 1024;

/**
 * Parses a 2xx upstream body that must be a JSON object. Anything else (not JSON,
 * `null`, an array, a string) is the upstream's failure: a 502 `upstream_error` naming
 * the provider, never a 500 from a crash further down.
 */
export function parseUpstreamObject(
  body: Buffer | string,
  providerName: string,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw notAJsonObject(providerName, 'a body that is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw notAJsonObject(providerName, 'JSON that is not an object');
  }
  return value as Record<string, unknown>;
}

function notAJsonObject(providerName: string, what: string): UpstreamHttpError {
  return new UpstreamHttpError(
    502,
    'server',
    `The upstream provider '${providerName}' answered with ${what}.`,
    { code: 'upstream_error' },
  );
}

/** True when the answer is an event stream (a missing content type is given the benefit). */
export function isEventStream(res: UpstreamResponse): boolean {
  const type = res.headers['content-type'];
  const text = Array.isArray(type) ? type.join(',') : type;
  return text === undefined || text === '' || /text\/event-stream/i.test(text);
}

/**
 * For a streamed request: resolves when the 2xx answer is an event stream, else reads a
 * bounded part of the body and rejects, before anything reached the client. A JSON error
 * body keeps its message (and its status class when it states one); anything else is a
 * 502 `upstream_error` naming the provider and the content type.
 */
export async function requireEventStream(
  res: UpstreamResponse,
  providerName: string,
): Promise<void> {
  if (isEventStream(res)) {
    return;
  }
  throw await notAnEventStream(res, providerName);
}

async function notAnEventStream(
  res: UpstreamResponse,
  providerName: string,
): Promise<GatewayError> {
  const type = String(res.headers['content-type']);
  const text = await readBounded(res, MAX_EXPLAINED_BODY);
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
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
