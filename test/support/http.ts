import { TEST_KEY } from './gateway';

/**
 * POSTs `body` to `origin + path` as a client would: JSON (a string or bytes go as they
 * are), with `key` as a bearer token (`null`: no key). `headers` add to or replace those.
 */
export function post(
  origin: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  key: string | null = TEST_KEY,
): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: {
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      'content-type': 'application/json',
      ...headers,
    },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}
