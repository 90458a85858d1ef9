import { Subject, lastValueFrom, toArray } from 'rxjs';
import type { SseFrame } from '../../common/sse/sse-writer';
import {
  type ChatRelayOptions,
  fromChatUsage,
  relayChatFrames,
  rewriteModel,
  spliceIncludeUsage,
  usageOfChunk,
} from './chat.passthrough';

describe('rewriteModel', () => {
  it('replaces the value of the model key', () => {
    const chunk =
      '{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-2024-08-06","choices":[]}';
    const out = rewriteModel(chunk, '"model":"gpt-4o"');
    expect(JSON.parse(out)).toEqual({
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'gpt-4o',
      choices: [],
    });
  });

  it('handles whitespace around the colon and escapes in the old value', () => {
    const out = rewriteModel('{"model" : "we\\"ird\\\\", "x":1}', '"model":"clean"');
    expect(JSON.parse(out)).toEqual({ model: 'clean', x: 1 });
  });

  it('does not touch escaped "model" text inside content that comes first', () => {
    const original = {
      choices: [{ delta: { content: 'say "model":"evil" please' } }],
      model: 'upstream-id',
    };
    const out = rewriteModel(JSON.stringify(original), '"model":"public-id"');
    expect(JSON.parse(out)).toEqual({
      choices: [{ delta: { content: 'say "model":"evil" please' } }],
      model: 'public-id',
    });
  });

  it('leaves a chunk without a model key unchanged', () => {
    const chunk = '{"choices":[{"delta":{"content":"model"}}]}';
    expect(rewriteModel(chunk, '"model":"x"')).toBe(chunk);
  });

  it('replaces only the first model key', () => {
    const out = rewriteModel('{"model":"a","nested":{"model":"b"}}', '"model":"z"');
    expect(JSON.parse(out)).toEqual({ model: 'z', nested: { model: 'b' } });
  });
});

describe('usageOfChunk', () => {
  it('reads the usage of the final chunk', () => {
    const chunk = JSON.stringify({
      id: 'c',
      choices: [],
      usage: {
        prompt_tokens: 11,
        completion_tokens: 7,
        total_tokens: 18,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
    expect(usageOfChunk(chunk)).toEqual({
      inputTokens: 11,
      outputTokens: 7,
      cachedInputTokens: 3,
      reasoningTokens: 2,
    });
  });

  it('returns undefined for usage:null', () => {
    expect(
      usageOfChunk('{"id":"c","choices":[{"delta":{"content":"hi"}}],"usage":null}'),
    ).toBeUndefined();
  });

  it('returns undefined for a chunk without usage', () => {
    expect(usageOfChunk('{"id":"c","choices":[]}')).toBeUndefined();
  });

  it('returns undefined for text that looks like usage but is not JSON', () => {
    expect(usageOfChunk('{"usage": {broken')).toBeUndefined();
  });

  it('does not mistake usage text inside content for a usage object', () => {
    const chunk = JSON.stringify({
      choices: [{ delta: { content: '"usage": {"prompt_tokens": 5}' } }],
    });
    expect(usageOfChunk(chunk)).toBeUndefined();
  });
});

describe('fromChatUsage', () => {
  it('defaults missing counts and null details to zero', () => {
    expect(
      fromChatUsage({
        prompt_tokens: 4,
        prompt_tokens_details: null,
        completion_tokens_details: null,
      }),
    ).toEqual({ inputTokens: 4, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 });
  });
});

describe('spliceIncludeUsage', () => {
  it('puts include_usage first, keeping every other byte of the body', () => {
    const raw = ' \n{"model":"m",  "stream":true,"messages":[{"content":"\\u00e9"}]}';
    const out = spliceIncludeUsage(Buffer.from(raw))!.toString('utf8');
    expect(out).toBe(
      ' \n{"stream_options":{"include_usage":true},"model":"m",  "stream":true,"messages":[{"content":"\\u00e9"}]}',
    );
    expect(JSON.parse(out)).toEqual({
      stream_options: { include_usage: true },
      ...(JSON.parse(raw) as object),
    });
  });

  it('writes bytes of their own, not a slice of the shared pool the call would keep', () => {
    const out = spliceIncludeUsage(Buffer.from('{"stream":true}'))!;
    expect(out.toString('utf8')).toBe('{"stream_options":{"include_usage":true},"stream":true}');
    expect(out.byteLength).toBe(out.buffer.byteLength);
  });

  it('gives up on bytes that do not open an object', () => {
    expect(spliceIncludeUsage(Buffer.from('[1]'))).toBeUndefined();
    expect(spliceIncludeUsage(Buffer.from(''))).toBeUndefined();
  });
});

describe('relayChatFrames', () => {
  const chunk = (model: string, finish: string | null, content = 'x'): string =>
    JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      model,
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    });
  const usageChunk = (model: string): string =>
    JSON.stringify({
      id: 'c1',
      model,
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    });

  async function relay(
    frames: string[],
    opts: Partial<ChatRelayOptions> = {},
  ): Promise<{ out: string[]; error?: Record<string, unknown>; usage: unknown[] }> {
    const source = new Subject<SseFrame>();
    const usage: unknown[] = [];
    const done = lastValueFrom(
      relayChatFrames(source, {
        modelId: 'public',
        sameModelId: false,
        stripUsageChunk: false,
        onUsage: (u) => usage.push(u),
        ...opts,
      }).pipe(toArray()),
    );
    const out: string[] = [];
    frames.forEach((data) => source.next({ data }));
    source.complete();
    try {
      out.push(...(await done).map((f) => f.data));
      return { out, usage };
    } catch (e) {
      return { out, error: e as Record<string, unknown>, usage };
    }
  }

  it('relays the chunks with the catalog id and the upstream [DONE]', async () => {
    const { out, error } = await relay([
      chunk('up-2025', null),
      chunk('up-2025', 'stop'),
      '[DONE]',
    ]);
    expect(error).toBeUndefined();
    expect(out).toEqual([chunk('public', null), chunk('public', 'stop'), '[DONE]']);
  });

  it('adds [DONE] when a finish_reason was seen (spaces around the colon too)', async () => {
    const spaced = '{"model": "up", "choices": [{"delta": {}, "finish_reason": "length"}]}';
    expect((await relay([chunk('up', 'stop')])).out.slice(-1)).toEqual(['[DONE]']);
    const { out, error } = await relay([chunk('up', null), spaced]);
    expect(error).toBeUndefined();
    expect(out[out.length - 1]).toBe('[DONE]');
  });

  it('fails a stream that ends with neither [DONE] nor a finish_reason', async () => {
    const { error } = await relay([chunk('up', null), chunk('up', null)]);
    expect(error).toMatchObject({ status: 502, code: 'upstream_stream_incomplete' });
    expect((await relay([])).error).toMatchObject({ code: 'upstream_stream_incomplete' });
  });

  it("does not fail after the upstream's own error frame", async () => {
    const { out, error } = await relay([chunk('up', null), '{"error":{"message":"boom"}}']);
    expect(error).toBeUndefined();
    expect(out.slice(-2)).toEqual(['{"error":{"message":"boom"}}', '[DONE]']);
  });

  it('drops the usage-only chunk it asked for, after reading its usage', async () => {
    const { out, usage } = await relay([chunk('up', 'stop'), usageChunk('up'), '[DONE]'], {
      stripUsageChunk: true,
    });
    expect(out).toEqual([chunk('public', 'stop'), '[DONE]']);
    expect(usage).toEqual([expect.objectContaining({ inputTokens: 3, outputTokens: 4 })]);
  });

  it('skips the model regex for a chunk that already carries the catalog id', async () => {
    const replace = jest.spyOn(String.prototype, 'replace');
    try {
      const same = chunk('public', null);
      const dated = chunk('public-2025-04-14', 'stop');
      const { out } = await relay([same, dated, '[DONE]'], { sameModelId: true });
      expect(out).toEqual([same, chunk('public', 'stop'), '[DONE]']);
      // One rewrite: the dated snapshot id; none for the chunk already right.
      expect(replace).toHaveBeenCalledTimes(1);
    } finally {
      replace.mockRestore();
    }
  });
});
