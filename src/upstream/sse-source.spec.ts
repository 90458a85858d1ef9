import { PassThrough } from 'node:stream';
import { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import { sseFrames } from './sse-source';
import type { UpstreamResponse } from './upstream-http.client';

function feed(chunks: (string | Buffer)[]): Promise<SseFrame[]> {
  const body = new PassThrough();
  const res = { body } as unknown as UpstreamResponse;
  const frames: SseFrame[] = [];
  const done = new Promise<SseFrame[]>((resolve, reject) => {
    sseFrames(res, new FlowControl(), () => undefined, new AbortController().signal).subscribe({
      next: (f) => frames.push(f),
      error: reject,
      complete: () => resolve(frames),
    });
  });
  for (const c of chunks) {
    body.write(c);
  }
  body.end();
  return done;
}

describe('sseFrames', () => {
  it('keeps event names and data, and ignores comments', async () => {
    expect(await feed(['event: a\ndata: {"x":1}\n\n: keepalive\n\ndata: [DONE]\n\n'])).toEqual([
      { event: 'a', data: '{"x":1}' },
      { data: '[DONE]' },
    ]);
  });

  it('does not lose a last event that lacks its closing blank line', async () => {
    expect(await feed(['data: one\n\nevent: response.completed\ndata: {"done":true}'])).toEqual([
      { data: 'one' },
      { event: 'response.completed', data: '{"done":true}' },
    ]);
  });

  it('reassembles a multi-byte character split across two chunks', async () => {
    const bytes = Buffer.from('data: café ☕\n\n', 'utf8');
    const cut = bytes.indexOf(0xe2) + 1;
    expect(await feed([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([
      { data: 'café ☕' },
    ]);
  });
});
