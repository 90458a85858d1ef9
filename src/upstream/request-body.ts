/**
 * From this size on a body goes as a one-shot iterable: undici keeps a request's body
 * object until the answer ends (a stream may run for minutes), but not what an iterable
 * yielded. Smaller bodies go as bytes, undici's fastest path (one write with the head).
 */
export const ONE_SHOT_BODY_BYTES = 64 * 1024;

/** A body as undici takes it, with the headers it goes with. */
export interface RequestBody {
  body: Buffer | Iterable<Buffer> | undefined;
  headers: Record<string, string>;
}

/**
 * The body as bytes of its own. A small Buffer (a string undici would convert, a spliced
 * client body) is a slice of Node's shared 8 KB pool: while undici keeps it, it keeps the
 * whole slab alive.
 */
export function ownBytes(body: string | Buffer | undefined): Buffer | undefined {
  if (
    body === undefined ||
    (typeof body !== 'string' && body.byteLength === body.buffer.byteLength)
  ) {
    return body;
  }
  const bytes = Buffer.allocUnsafeSlow(
    typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
  );
  if (typeof body === 'string') {
    bytes.write(body);
  } else {
    body.copy(bytes);
  }
  return bytes;
}

/** Yields its bytes once and forgets them. */
class OneShotBody implements Iterable<Buffer> {
  constructor(private bytes: Buffer | undefined) {}

  [Symbol.iterator](): Iterator<Buffer> {
    return {
      next: (): IteratorResult<Buffer> => {
        const value = this.bytes;
        this.bytes = undefined;
        return value === undefined ? { done: true, value: undefined } : { done: false, value };
      },
    };
  }
}

/**
 * What an upstream request sends: small bodies as bytes of their own, large ones (an
 * agent's conversation, often hundreds of KB) as a one-shot iterable with their
 * `content-length`, so that an open stream holds none of them once they are written.
 */
export function requestBody(
  body: string | Buffer | undefined,
  headers: Record<string, string>,
): RequestBody {
  const bytes = ownBytes(body);
  if (bytes === undefined || bytes.byteLength < ONE_SHOT_BODY_BYTES) {
    return { body: bytes, headers };
  }
  return {
    body: new OneShotBody(bytes),
    headers: { ...headers, 'content-length': String(bytes.byteLength) },
  };
}
