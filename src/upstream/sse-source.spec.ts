import { PassThrough } from 'node:stream';
import { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import { type SseSourceOptions, isErrorFrame, looksLikeJsonObject, sseFrames } from './sse-source';
import type { UpstreamResponse } from './upstream-http.client';

interface Fed {
  frames: SseFrame[];
  error?: Record<string, unknown>;
  body: PassThrough;
}

function feed(chunks: (string | Buffer)[], opts: Partial<SseSourceOptions> = {}): Promise<Fed> {
  const body = new PassThrough();
  const res = { body } as unknown as UpstreamResponse;
  const frames: SseFrame[] = [];
  const done = new Promise<Fed>((resolve) => {
    sseFrames(res, {
      flow: new FlowControl(),
      abort: () => undefined,
      signal: new AbortController().signal,
      providerName: 'prov-x',
      requestId: 'req_1',
      maxEventBytes: 1024,
      redact: (text) => text.replaceAll('sk-secret-key', '[redacted]'),
      relayed: false,
      ...opts,
    }).subscribe({
      next: (f) => frames.push(f),
      error: (e: Record<string, unknown>) => resolve({ frames, error: e, body }),
      complete: () => resolve({ frames, body }),
    });
  });
  for (const c of chunks) {
    if (!body.destroyed) {
      body.write(c);
    }
  }
  if (!body.destroyed) {
    body.end();
  }
  return done;
}

describe('sseFrames', () => {
  it('keeps event names and data, and ignores comments', async () => {
    const { frames } = await feed(['event: a\ndata: {"x":1}\n\n: keepalive\n\ndata: [DONE]\n\n']);
    expect(frames).toEqual([{ event: 'a', data: '{"x":1}' }, { data: '[DONE]' }]);
  });

  it('does not lose a last event that lacks its closing blank line', async () => {
    const { frames } = await feed(['data: one\n\nevent: response.completed\ndata: {"done":true}']);
    expect(frames).toEqual([
      { data: 'one' },
      { event: 'response.completed', data: '{"done":true}' },
    ]);
  });

  it('reassembles a multi-byte character split across two chunks', async () => {
    const bytes = Buffer.from('data: café ☕\n\n', 'utf8');
    const cut = bytes.indexOf(0xe2) + 1;
    const { frames } = await feed([bytes.subarray(0, cut), bytes.subarray(cut)]);
    expect(frames).toEqual([{ data: 'café ☕' }]);
  });

  it('redacts the upstream error frames of every grammar, and only those', async () => {
    const { frames } = await feed([
      'data: {"choices":[{"delta":{"content":"sk-secret-key"}}]}\n\n',
      'data: {"error":{"message":"bad sk-secret-key"}}\n\n',
      'event: error\ndata: {"type":"error","error":{"message":"sk-secret-key"}}\n\n',
      'event: response.failed\ndata: {"response":{"error":{"message":"sk-secret-key"}}}\n\n',
      'data: {"type":"error","message":"sk-secret-key"}\n\n',
    ]);
    expect(frames.map((f) => f.data)).toEqual([
      // A healthy frame is not scanned: the model's own text is never touched.
      '{"choices":[{"delta":{"content":"sk-secret-key"}}]}',
      '{"error":{"message":"bad [redacted]"}}',
      '{"type":"error","error":{"message":"[redacted]"}}',
      '{"response":{"error":{"message":"[redacted]"}}}',
      '{"type":"error","message":"[redacted]"}',
    ]);
  });

  it('fails with upstream_response_too_large and drops the body when one event outgrows the cap', async () => {
    const { frames, error, body } = await feed([
      'data: {"ok":1}\n\n',
      `data: {"big":"${'x'.repeat(600)}`,
      'x'.repeat(600),
      '"}\n\ndata: {"after":1}\n\n',
    ]);
    expect(frames).toEqual([{ data: '{"ok":1}' }]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_response_too_large' });
    expect(error?.message).toContain("'prov-x'");
    expect(body.destroyed).toBe(true);
  });

  it('lets many events through whose total is far over the per-event cap', async () => {
    const event = `data: {"t":"${'y'.repeat(500)}"}\n\n`;
    const { frames, error } = await feed(Array.from({ length: 20 }, () => event));
    expect(error).toBeUndefined();
    expect(frames).toHaveLength(20);
  });

  it('fails a relayed stream with upstream_malformed_event on a frame that is not JSON', async () => {
    const { frames, error, body } = await feed(
      ['data: {"a":1}\n\n', 'data: {not valid json\n\n', 'data: {"b":2}\n\n'],
      { relayed: true },
    );
    expect(frames).toEqual([{ data: '{"a":1}' }]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_malformed_event' });
    expect(body.destroyed).toBe(true);
  });

  it('relays [DONE] and padded JSON objects, and leaves the check to the canonical path when not relayed', async () => {
    expect(
      (await feed(['data:  {"a":1} \n\n', 'data: [DONE]\n\n'], { relayed: true })).error,
    ).toBeUndefined();
    expect((await feed(['data: not json\n\n'], { relayed: false })).frames).toEqual([
      { data: 'not json' },
    ]);
  });
});

describe('isErrorFrame', () => {
  it.each([
    ['error', '{}'],
    ['response.failed', '{}'],
    [undefined, '{"error":{"message":"x"}}'],
    [undefined, ' { "type" : "error" }'],
    [undefined, '{"type":"response.failed","response":{"error":{"message":"x"}}}'],
    // An error that is not the first key, as OpenRouter and older vLLM send them.
    [
      undefined,
      '{"id":"c1","object":"chat.completion.chunk","choices":[],"error":{"message":"x"}}',
    ],
    [undefined, '{"object":"error","message":"x"}'],
  ])('recognizes event %p with %p', (event, data) => {
    expect(isErrorFrame(event, data)).toBe(true);
  });

  it.each([
    ['message_delta', '{"type":"message_delta"}'],
    [undefined, '{"choices":[{"delta":{"content":"{\\"error\\":1}"}}]}'],
    [undefined, '{"choices":[{"delta":{"content":"an \\"error\\" occurred"}}]}'],
  ])('leaves event %p with %p alone', (event, data) => {
    expect(isErrorFrame(event, data)).toBe(false);
  });
});

describe('looksLikeJsonObject', () => {
  it.each(['{}', ' {"a":1}\n', '{"a":{"b":[1]}}'])('accepts %j', (data) => {
    expect(looksLikeJsonObject(data)).toBe(true);
  });

  it.each(['', ' ', '{', '}', '{not valid json', '"text"', '[1]', 'null', '{"a":1'])(
    'rejects %j',
    (data) => {
      expect(looksLikeJsonObject(data)).toBe(false);
    },
  );
});
