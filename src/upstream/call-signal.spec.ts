import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { CallAbort } from './call-signal';

/** The part of an abort controller these specs drive, so that each runs on both kinds. */
interface Aborter {
  signal: {
    readonly aborted: boolean;
    readonly reason: unknown;
    addEventListener(type: 'abort', listener: () => void): void;
    removeEventListener(type: 'abort', listener: () => void): void;
  };
  abort(reason?: unknown): void;
}

const KINDS: [string, () => Aborter][] = [
  ['AbortController', () => new AbortController()],
  ['CallAbort', () => new CallAbort()],
];

describe.each(KINDS)('listener semantics shared with EventTarget: %s', (_kind, make) => {
  it('runs each listener once, in order, and records the reason', () => {
    const { signal, abort } = bound(make());
    const calls: string[] = [];
    const first = (): void => {
      calls.push(`first:${String(signal.reason)}`);
    };
    signal.addEventListener('abort', first);
    signal.addEventListener('abort', first); // the same listener twice runs once
    signal.addEventListener('abort', () => calls.push(`second:${signal.aborted}`));
    abort('why');
    abort('again');
    expect(calls).toEqual(['first:why', 'second:true']);
    expect(signal.reason).toBe('why');
  });

  it('never runs a removed listener, nor one added after the abort', () => {
    const { signal, abort } = bound(make());
    const removed = jest.fn();
    const late = jest.fn();
    signal.addEventListener('abort', removed);
    signal.removeEventListener('abort', removed);
    abort();
    signal.addEventListener('abort', late);
    expect(removed).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
  });

  it('skips a listener that an earlier one removed, and runs one added during the abort', () => {
    const { signal, abort } = bound(make());
    const calls: string[] = [];
    const second = (): void => void calls.push('second');
    const added = (): void => void calls.push('added');
    signal.addEventListener('abort', () => {
      calls.push('first');
      signal.removeEventListener('abort', second);
      signal.addEventListener('abort', added);
    });
    signal.addEventListener('abort', second);
    signal.addEventListener('abort', () => calls.push('third'));
    abort();
    expect(calls).toEqual(['first', 'third', 'added']);
  });
});

/** The controller's signal and abort, callable unbound. */
function bound(aborter: Aborter): { signal: Aborter['signal']; abort: (reason?: unknown) => void } {
  return { signal: aborter.signal, abort: (reason) => aborter.abort(reason) };
}

describe('CallAbort', () => {
  it('gives an AbortError when aborted without a reason, as AbortController does', () => {
    const abort = new CallAbort();
    abort.abort();
    expect(abort.reason).toBeInstanceOf(DOMException);
    expect((abort.reason as DOMException).name).toBe('AbortError');
  });

  it('never runs a removed listener, nor one added after the abort', () => {
    const abort = new CallAbort();
    const removed = jest.fn();
    const late = jest.fn();
    abort.addEventListener('abort', removed);
    abort.removeEventListener('abort', removed);
    abort.abort();
    abort.addEventListener('abort', late);
    expect(removed).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
  });

  it('runs the other listeners when one throws, and rethrows its error on the next tick', () => {
    const abort = new CallAbort();
    const after = jest.fn();
    const ticks: (() => void)[] = [];
    const nextTick = jest
      .spyOn(process, 'nextTick')
      .mockImplementation((fn) => void ticks.push(fn as () => void));
    try {
      abort.addEventListener('abort', () => {
        throw new Error('listener failed');
      });
      abort.addEventListener('abort', after);
      abort.abort();
    } finally {
      nextTick.mockRestore();
    }
    expect(after).toHaveBeenCalledTimes(1);
    expect(ticks).toHaveLength(1);
    expect(ticks[0]).toThrow('listener failed');
  });

  describe('as the signal of an undici request', () => {
    let server: Server;
    let origin: string;

    beforeAll(async () => {
      // Answers the head at once and never ends the body.
      server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        if (req.url === '/whole') {
          res.end('whole');
        } else {
          res.write('partial');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('cancels the request before its head with the reason', async () => {
      const abort = new CallAbort();
      const reason = new Error('deadline');
      abort.abort(reason);
      await expect(request(origin, { signal: abort.signal })).rejects.toBe(reason);
    });

    it('cancels a body being read', async () => {
      const abort = new CallAbort();
      const res = await request(origin, { signal: abort.signal });
      const reading = res.body.text();
      await sleep(10);
      abort.abort(new Error('client left'));
      await expect(reading).rejects.toThrow('client left');
    });

    it('is left without listeners once a request ended normally', async () => {
      const abort = new CallAbort();
      const res = await request(`${origin}/whole`, { signal: abort.signal });
      expect(await res.body.text()).toBe('whole');
      // undici removes it when the body emits 'close', just after the last read.
      await new Promise((resolve) => setImmediate(resolve));
      expect((abort as unknown as { listeners?: unknown[] }).listeners ?? []).toEqual([]);
    });
  });
});
