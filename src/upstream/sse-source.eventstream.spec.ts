import { PassThrough } from 'node:stream';
import { crc32 } from 'node:zlib';
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { FlowControl } from '../common/sse/flow-control';
import type { SseFrame } from '../common/sse/sse-writer';
import { type SseSourceOptions, sseFrames } from './sse-source';
import { isEventStream } from './upstream-body';
import type { UpstreamResponse } from './upstream-http.client';

// Frames are encoded with the same codec the reader decodes with, as AWS services send them.
const codec = new EventStreamCodec(toUtf8, fromUtf8);

function message(headers: Record<string, string>, payload: string): Buffer {
  const typed: MessageHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    typed[name] = { type: 'string', value };
  }
  return Buffer.from(codec.encode({ headers: typed, body: fromUtf8(payload) }));
}

function event(type: string, payload: string): Buffer {
  return message(
    { ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' },
    payload,
  );
}

/** `bytes` cut at each of `at` (sorted offsets). */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (const to of at) {
    parts.push(bytes.subarray(from, to));
    from = to;
  }
  parts.push(bytes.subarray(from));
  return parts;
}

interface Fed {
  frames: SseFrame[];
  error?: Record<string, unknown>;
  body: PassThrough;
}

function feed(chunks: Buffer[], opts: Partial<SseSourceOptions> = {}): Promise<Fed> {
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
      framing: 'aws-eventstream',
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

const STREAM = [
  event('messageStart', '{"role":"assistant"}'),
  event('contentBlockDelta', '{"contentBlockIndex":0,"delta":{"text":"café ☕"}}'),
  event('contentBlockStop', '{"contentBlockIndex":0}'),
  event('messageStop', '{"stopReason":"end_turn"}'),
];
const EXPECTED: SseFrame[] = [
  { event: 'messageStart', data: '{"role":"assistant"}' },
  { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"café ☕"}}' },
  { event: 'contentBlockStop', data: '{"contentBlockIndex":0}' },
  { event: 'messageStop', data: '{"stopReason":"end_turn"}' },
];

describe('sseFrames with aws-eventstream framing', () => {
  it('decodes each message into a frame named by its :event-type', async () => {
    const { frames, error } = await feed(STREAM);
    expect(error).toBeUndefined();
    expect(frames).toEqual(EXPECTED);
  });

  it('reads a message laid out by hand from the format description, not by the codec', async () => {
    const header = (name: string, value: string): Buffer => {
      const v = Buffer.from(value);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(v.length);
      // name length, name, type 7 (string), value length, value
      return Buffer.concat([
        Buffer.from([name.length]),
        Buffer.from(name),
        Buffer.from([7]),
        len,
        v,
      ]);
    };
    const headers = Buffer.concat([
      header(':event-type', 'chunk'),
      header(':message-type', 'event'),
    ]);
    const payload = Buffer.from('{"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdG9wIn0="}');
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(12 + headers.length + payload.length + 4, 0);
    prelude.writeUInt32BE(headers.length, 4);
    prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
    const body = Buffer.concat([prelude, headers, payload]);
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc32(body));
    const { frames, error } = await feed([Buffer.concat([body, tail])]);
    expect(error).toBeUndefined();
    expect(frames).toEqual([{ event: 'chunk', data: payload.toString() }]);
  });

  it('reassembles messages whatever the chunk boundaries', async () => {
    const bytes = Buffer.concat(STREAM);
    // Every byte its own chunk, then a few irregular cuts, some inside two messages at once.
    const cuts = [
      Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      [1, 2, 3, 50, 51, 120, bytes.length - 5],
      [STREAM[0].length + 7, STREAM[0].length + STREAM[1].length + 30],
    ];
    for (const at of cuts) {
      const { frames, error } = await feed(cut(bytes, at));
      expect(error).toBeUndefined();
      expect(frames).toEqual(EXPECTED);
    }
  });

  it('waits for the rest of a message split inside its prelude', async () => {
    const [first, second] = STREAM;
    // 2 bytes into the total length, then 9 into the prelude (inside its CRC).
    const bytes = Buffer.concat([first, second]);
    const { frames, error } = await feed(cut(bytes, [first.length + 2, first.length + 9]));
    expect(error).toBeUndefined();
    expect(frames).toEqual(EXPECTED.slice(0, 2));
  });

  it.each([
    ['the payload', (m: Buffer) => m.length - 8],
    ['the prelude CRC', () => 9],
    ['the message CRC', (m: Buffer) => m.length - 1],
  ])('fails with upstream_malformed_event on a CRC mismatch in %s', async (_where, position) => {
    const bad = Buffer.from(STREAM[1]);
    bad[position(bad)] ^= 0xff;
    const { frames, error, body } = await feed([STREAM[0], bad, STREAM[2]]);
    expect(frames).toEqual(EXPECTED.slice(0, 1));
    expect(error).toMatchObject({ status: 502, code: 'upstream_malformed_event' });
    expect(body.destroyed).toBe(true);
  });

  it('fails with upstream_malformed_event on a message shorter than the format allows', async () => {
    const tiny = Buffer.alloc(8);
    tiny.writeUInt32BE(8, 0);
    const { frames, error } = await feed([STREAM[0], tiny]);
    expect(frames).toEqual(EXPECTED.slice(0, 1));
    expect(error).toMatchObject({ status: 502, code: 'upstream_malformed_event' });
  });

  it('fails with upstream_malformed_event when the body ends inside a message', async () => {
    const { frames, error } = await feed([STREAM[0], STREAM[1].subarray(0, 20)]);
    expect(frames).toEqual(EXPECTED.slice(0, 1));
    expect(error).toMatchObject({ status: 502, code: 'upstream_malformed_event' });
  });

  it('fails with upstream_response_too_large as soon as a declared length outgrows the cap', async () => {
    const big = event('contentBlockDelta', `{"delta":{"text":"${'x'.repeat(1200)}"}}`);
    // Only the prelude is sent: the length it declares is enough to refuse the message.
    const { frames, error, body } = await feed([STREAM[0], big.subarray(0, 12)]);
    expect(frames).toEqual(EXPECTED.slice(0, 1));
    expect(error).toMatchObject({ status: 502, code: 'upstream_response_too_large' });
    expect(error?.message).toContain("'prov-x'");
    expect(body.destroyed).toBe(true);
  });

  it('lets many messages through whose total is far over the per-event cap', async () => {
    const one = event('contentBlockDelta', `{"delta":{"text":"${'y'.repeat(500)}"}}`);
    const { frames, error } = await feed(Array.from({ length: 20 }, () => one));
    expect(error).toBeUndefined();
    expect(frames).toHaveLength(20);
  });

  it('turns an exception message into a redacted error frame, and leaves healthy ones alone', async () => {
    const exception = message(
      {
        ':message-type': 'exception',
        ':exception-type': 'throttlingException',
        ':content-type': 'application/json',
      },
      '{"message":"Too many requests for key sk-secret-key"}',
    );
    const healthy = event('contentBlockDelta', '{"delta":{"text":"sk-secret-key"}}');
    const { frames, error } = await feed([healthy, exception]);
    expect(error).toBeUndefined();
    expect(frames).toEqual([
      { event: 'contentBlockDelta', data: '{"delta":{"text":"sk-secret-key"}}' },
      {
        event: 'error',
        data: '{"type":"error","error":{"type":"throttlingException","message":"Too many requests for key [redacted]"}}',
      },
    ]);
  });

  it('turns a protocol error message into an error frame from its headers', async () => {
    const failure = message(
      {
        ':message-type': 'error',
        ':error-code': 'InternalFailure',
        ':error-message': 'sk-secret-key went wrong',
      },
      '',
    );
    const { frames } = await feed([failure]);
    expect(frames).toEqual([
      {
        event: 'error',
        data: '{"type":"error","error":{"type":"InternalFailure","message":"[redacted] went wrong"}}',
      },
    ]);
  });

  it('checks relayed payloads like the other framings', async () => {
    const { frames, error } = await feed([STREAM[0], event('contentBlockDelta', 'not json')], {
      relayed: true,
    });
    expect(frames).toEqual(EXPECTED.slice(0, 1));
    expect(error).toMatchObject({ status: 502, code: 'upstream_malformed_event' });
  });
});

describe('isEventStream with aws-eventstream framing', () => {
  const answer = (type?: string): UpstreamResponse =>
    ({ headers: type === undefined ? {} : { 'content-type': type } }) as UpstreamResponse;

  it('accepts the event-stream content type, and a missing one', () => {
    expect(isEventStream(answer('application/vnd.amazon.eventstream'), 'aws-eventstream')).toBe(
      true,
    );
    expect(isEventStream(answer(), 'aws-eventstream')).toBe(true);
  });

  it('refuses a JSON body or SSE', () => {
    expect(isEventStream(answer('application/json'), 'aws-eventstream')).toBe(false);
    expect(isEventStream(answer('text/event-stream'), 'aws-eventstream')).toBe(false);
  });
});
