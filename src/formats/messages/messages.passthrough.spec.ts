import { Subject, lastValueFrom, toArray } from 'rxjs';
import type { SseFrame } from '../../common/sse/sse-writer';
import type { CanonicalUsage } from '../../core/canonical';
import { StreamUsage, fromAnthropicUsage, relayMessagesFrames } from './messages.passthrough';

const START =
  '{"type":"message_start","message":{"model":"claude-upstream-1","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":1}}}';
const DELTA =
  '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}}';

describe('fromAnthropicUsage', () => {
  it('counts cache reads and writes into the canonical input, and keeps them apart too', () => {
    expect(
      fromAnthropicUsage({
        input_tokens: 12,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 2000,
        output_tokens: 30,
        output_tokens_details: { thinking_tokens: 7 },
      }),
    ).toEqual({
      inputTokens: 2112,
      outputTokens: 30,
      cachedInputTokens: 2000,
      cacheWriteInputTokens: 100,
      reasoningTokens: 7,
    });
    expect(fromAnthropicUsage({ input_tokens: 3, cache_read_input_tokens: null })).toEqual({
      inputTokens: 3,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
    });
  });
});

describe('StreamUsage', () => {
  it('reads input from message_start and the cumulative totals from message_delta', () => {
    const usage = new StreamUsage();
    expect(usage.read('message_start', START)).toMatchObject({
      inputTokens: 2112,
      outputTokens: 1,
    });
    expect(usage.read('content_block_delta', '{"type":"content_block_delta"}')).toBeUndefined();
    expect(usage.read('message_delta', DELTA)).toEqual({
      inputTokens: 2112,
      outputTokens: 30,
      cachedInputTokens: 2000,
      cacheWriteInputTokens: 100,
    });
  });

  it('lets non-null delta counters overwrite the start values, and ignores bad JSON', () => {
    const usage = new StreamUsage();
    usage.read('message_start', START);
    expect(
      usage.read(
        'message_delta',
        '{"type":"message_delta","delta":{},"usage":{"input_tokens":15,"cache_read_input_tokens":null,"output_tokens":4}}',
      ),
    ).toMatchObject({ inputTokens: 2115, outputTokens: 4, cachedInputTokens: 2000 });
    expect(usage.read('message_delta', '{not json')).toBeUndefined();
  });
});

describe('relayMessagesFrames', () => {
  async function relay(frames: SseFrame[]): Promise<{ out: SseFrame[]; usage: CanonicalUsage[] }> {
    const source = new Subject<SseFrame>();
    const usage: CanonicalUsage[] = [];
    const done = lastValueFrom(
      relayMessagesFrames(source, 'public-claude', (u) => usage.push(u)).pipe(toArray()),
    );
    frames.forEach((f) => source.next(f));
    source.complete();
    return { out: await done, usage };
  }

  it('relays every frame as it is, but for the catalog id in message_start', async () => {
    const ping = { event: 'ping', data: '{"type": "ping"}' };
    const block = {
      event: 'content_block_delta',
      data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\"model\\":\\"x\\""}}',
    };
    const error = {
      event: 'error',
      data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    };
    const { out, usage } = await relay([
      { event: 'message_start', data: START },
      ping,
      block,
      { event: 'message_delta', data: DELTA },
      error,
    ]);
    expect(out).toEqual([
      { event: 'message_start', data: START.replace('"claude-upstream-1"', '"public-claude"') },
      ping,
      block,
      { event: 'message_delta', data: DELTA },
      error,
    ]);
    expect(out[1]).toBe(ping);
    expect(usage.map((u) => u.outputTokens)).toEqual([1, 30]);
  });

  it('names an unnamed event after its JSON type', async () => {
    const { out } = await relay([
      { data: DELTA },
      { data: '{"type": "message_stop"}' },
      { data: 'x' },
    ]);
    expect(out).toEqual([
      { event: 'message_delta', data: DELTA },
      { event: 'message_stop', data: '{"type": "message_stop"}' },
      { data: 'x' },
    ]);
  });

  it('fails a stream that ends without message_stop', async () => {
    const source = new Subject<SseFrame>();
    const out: SseFrame[] = [];
    const done = new Promise<unknown>((resolve) =>
      relayMessagesFrames(source, 'public-claude', () => undefined).subscribe({
        next: (f) => out.push(f),
        error: resolve,
        complete: () => resolve(undefined),
      }),
    );
    source.next({ event: 'message_start', data: START });
    source.next({ event: 'message_delta', data: DELTA });
    source.complete();
    expect(await done).toMatchObject({ status: 502, code: 'upstream_stream_incomplete' });
    expect(out.map((f) => f.event)).toEqual(['message_start', 'message_delta']);
  });

  it('ends quietly after message_stop or an upstream error event', async () => {
    const stop = await relay([{ data: START }, { data: '{"type":"message_stop"}' }]);
    expect(stop.out.map((f) => f.event)).toEqual(['message_start', 'message_stop']);
    const error = await relay([
      { data: START },
      { event: 'error', data: '{"type":"error","error":{"type":"api_error","message":"x"}}' },
    ]);
    expect(error.out.map((f) => f.event)).toEqual(['message_start', 'error']);
  });
});
