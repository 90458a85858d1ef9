import { Readable } from 'node:stream';
import {
  type AnswerKind,
  notAnEventStream,
  parseUpstreamAnswer,
  readCapped,
} from './upstream-body';
import type { UpstreamResponse } from './upstream-http.client';
import { CallAbort } from './call-signal';
import { mapTransportError } from './upstream-errors';
import { UpstreamTimeoutError } from '../common/errors/gateway-errors';

async function requireEventStream(res: UpstreamResponse, provider: string): Promise<void> {
  const error = await notAnEventStream(res, provider, (text) => text);
  if (error !== undefined) {
    throw error;
  }
}

function answer(contentType: string | undefined, body: Readable | string): UpstreamResponse {
  return {
    statusCode: 200,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: typeof body === 'string' ? Readable.from([Buffer.from(body)]) : body,
  } as unknown as UpstreamResponse;
}

async function failure(res: UpstreamResponse): Promise<Record<string, unknown>> {
  try {
    await requireEventStream(res, 'prov-x');
  } catch (e) {
    return e as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

describe('parseUpstreamAnswer', () => {
  const valid: [AnswerKind, string][] = [
    ['chat_completions', '{"id":"c","choices":[{"index":0,"message":{"content":"hi"}}]}'],
    ['responses', '{"id":"r","output":[],"error":null}'],
    ['messages', '{"id":"m","type":"message","content":[]}'],
    ['count_tokens', '{"input_tokens":3}'],
    ['object', '{"id":"resp_1","deleted":true}'],
  ];

  it.each(valid)('returns a valid %s answer parsed', (kind, text) => {
    expect(parseUpstreamAnswer(Buffer.from(text), 'p', kind)).toEqual(JSON.parse(text));
  });

  it.each(['<html>502</html>', 'null', '[1]', '"text"', '7', ''])(
    'answers a 502 upstream_error naming the provider for %j',
    (text) => {
      expect(() => parseUpstreamAnswer(Buffer.from(text), 'prov-x', 'object')).toThrow(
        expect.objectContaining({
          status: 502,
          kind: 'server',
          code: 'upstream_error',
          message: expect.stringContaining("'prov-x'") as unknown,
        }),
      );
    },
  );

  it.each([
    ['chat_completions', '{}', 'choices[0].message'],
    ['chat_completions', '{"choices":[]}', 'choices[0].message'],
    ['chat_completions', '{"choices":[{"message":null}]}', 'choices[0].message'],
    ['responses', '{"id":"r"}', 'output'],
    ['messages', '{"id":"m","content":"text"}', 'content'],
    ['count_tokens', '{"tokens":3}', 'input_tokens'],
  ] as [AnswerKind, string, string][])(
    'answers a 502 for a %s answer %s that lacks %s',
    (kind, text, field) => {
      expect(() => parseUpstreamAnswer(text, 'prov-x', kind)).toThrow(
        expect.objectContaining({
          status: 502,
          code: 'upstream_error',
          message: expect.stringContaining(field) as unknown,
        }),
      );
    },
  );

  it('turns a 2xx error body into its error, with the status class it states or 502', () => {
    expect(() =>
      parseUpstreamAnswer('{"error":{"message":"quota gone"}}', 'prov-x', 'chat_completions'),
    ).toThrow(
      expect.objectContaining({ status: 502, message: expect.stringContaining('quota gone') }),
    );
    expect(() =>
      parseUpstreamAnswer(
        '{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}',
        'p',
        'messages',
      ),
    ).toThrow(expect.objectContaining({ status: 429, message: 'slow' }));
    expect(() => parseUpstreamAnswer('{"error":true}', 'prov-x', 'object')).toThrow(
      expect.objectContaining({ status: 502, code: 'upstream_error' }),
    );
  });
});

/** A body that sends its first bytes, then nothing more. */
function partOfAnAnswer(): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(Buffer.from('{"a":'));
      }
    },
  });
}

describe('readCapped', () => {
  const ok = (body: Readable, headers: Record<string, string> = {}): UpstreamResponse =>
    ({ statusCode: 200, headers, body }) as unknown as UpstreamResponse;
  const signal = new AbortController().signal;

  it('returns the whole body when it fits', async () => {
    const body = Readable.from([Buffer.from('{"a":'), Buffer.from('1}')]);
    expect((await readCapped(ok(body), 100, signal, 'p')).toString()).toBe('{"a":1}');
  });

  it('refuses a declared content-length over the cap without reading', async () => {
    const body = Readable.from([Buffer.from('x')]);
    await expect(
      readCapped(ok(body, { 'content-length': '101' }), 100, signal, 'prov-x'),
    ).rejects.toMatchObject({ status: 502, code: 'upstream_response_too_large' });
    expect(body.destroyed).toBe(true);
  });

  it('stops reading and drops the body as soon as it passes the cap', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024, 'a'));
      },
    });
    await expect(readCapped(ok(endless), 10 * 1024, signal, 'prov-x')).rejects.toMatchObject({
      status: 502,
      code: 'upstream_response_too_large',
      message: expect.stringContaining("'prov-x'") as unknown,
    });
    expect(produced).toBeLessThan(64 * 1024);
    expect(endless.destroyed).toBe(true);
  });

  it('rejects with the transport error when the body fails while read', async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.from('{"a":'));
        this.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      },
    });
    const error = await readCapped(ok(failing), 100, signal, 'p').catch((e: unknown) => e);
    expect(error).toEqual(
      mapTransportError(Object.assign(new Error('x'), { code: 'ECONNRESET' }), signal),
    );
  });

  it("rejects with the abort's reason when the call is aborted mid-answer", async () => {
    const abort = new CallAbort();
    const reason = new UpstreamTimeoutError('too slow');
    const stalled = partOfAnAnswer();
    const reading = readCapped(ok(stalled), 100, abort.signal, 'p');
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort(reason);
    stalled.destroy(); // as undici does on abort: without an error of its own
    await expect(reading).rejects.toBe(reason);
  });

  it('rejects at once, without waiting for a close already past, a body destroyed before the read', async () => {
    const gone = partOfAnAnswer();
    gone.destroy();
    await new Promise((resolve) => setImmediate(resolve)); // its 'close' has been emitted
    await expect(readCapped(ok(gone), 100, signal, 'p')).rejects.toMatchObject({
      message: expect.stringContaining('ERR_STREAM_PREMATURE_CLOSE') as unknown,
    });
  });

  it('never resolves a body destroyed before its end as if it were whole', async () => {
    const cut = partOfAnAnswer();
    const reading = readCapped(ok(cut), 100, signal, 'p');
    await new Promise((resolve) => setImmediate(resolve));
    cut.destroy();
    await expect(reading).rejects.toBeInstanceOf(Error);
  });
});

describe('requireEventStream', () => {
  it('accepts an event stream (any case, with parameters) and leaves its body unread', async () => {
    const body = Readable.from([Buffer.from('data: x\n\n')]);
    await expect(
      requireEventStream(answer('Text/Event-Stream; charset=utf-8', body), 'p'),
    ).resolves.toBeUndefined();
    expect(body.readableEnded).toBe(false);
    await expect(
      requireEventStream(answer(undefined, 'data: x\n\n'), 'p'),
    ).resolves.toBeUndefined();
  });

  it('turns an HTML page into a 502 naming the provider and the content type', async () => {
    const e = await failure(answer('text/html', '<html><body>Welcome to nginx</body></html>'));
    expect(e).toMatchObject({ status: 502, kind: 'server', code: 'upstream_error' });
    expect(e.message).toContain("'prov-x'");
    expect(e.message).toContain('text/html');
    expect(e.message).toContain('Welcome to nginx');
  });

  it('turns a whole JSON answer (the stream flag ignored) into a 502', async () => {
    const e = await failure(answer('application/json', '{"id":"c1","choices":[]}'));
    expect(e).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(e.message).toContain('application/json');
  });

  it('keeps the message and status class of a JSON error body', async () => {
    const openai = await failure(
      answer(
        'application/json',
        '{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}',
      ),
    );
    expect(openai).toMatchObject({
      status: 400,
      kind: 'invalid_request',
      message: 'too long',
      code: 'context_length_exceeded',
      param: 'messages',
    });
    const vllm = await failure(
      answer(
        'application/json',
        '{"object":"error","message":"bad model","type":"NotFoundError","param":null,"code":404}',
      ),
    );
    expect(vllm).toMatchObject({ status: 404, message: 'bad model' });
    const anthropic = await failure(
      answer(
        'application/json',
        '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
      ),
    );
    expect(anthropic).toMatchObject({ status: 429, message: 'slow down' });
    const unclassed = await failure(answer('application/json', '{"error":"boom"}'));
    expect(unclassed).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(unclassed.message).toContain('boom');
    expect(unclassed.message).toContain("'prov-x'");
  });

  it('reads only a bounded part of the body and discards the rest', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024, 'a'));
      },
    });
    const e = await failure(answer('text/html', endless));
    expect(e.status).toBe(502);
    expect(produced).toBeLessThan(1024 * 1024);
    expect(endless.destroyed).toBe(true);
    expect((e.message as string).length).toBeLessThan(1000);
  });
});
