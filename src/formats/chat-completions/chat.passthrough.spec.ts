import { fromChatUsage, rewriteModel, usageOfChunk } from './chat.passthrough';

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
