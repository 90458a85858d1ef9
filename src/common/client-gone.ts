import type { Response } from 'express';

const byResponse = new WeakMap<Response, AbortSignal>();

/**
 * A signal that aborts when the client leaves before the response finished. One 'close'
 * listener per response however many callers ask (every attempt of a retried request may),
 * so that many attempts never pile listeners up on the response.
 */
export function clientGoneSignal(res: Response): AbortSignal {
  let signal = byResponse.get(res);
  if (signal === undefined) {
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) {
        gone.abort();
      }
    });
    signal = gone.signal;
    byResponse.set(res, signal);
  }
  return signal;
}
