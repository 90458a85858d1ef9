import { type CacheKeyParts, cacheDirectives, cacheKey, canonicalJson } from './cache-key';

const base: CacheKeyParts = {
  format: 'chat_completions',
  model: 'gpt',
  candidates: ['gpt'],
  body: {
    model: 'gpt-alias',
    messages: [{ role: 'user', content: 'Hi' }],
    temperature: 0.2,
  },
  protections: [],
  scope: 'team:a',
  headers: {},
};
const keyOf = (over: Partial<CacheKeyParts>): string => cacheKey({ ...base, ...over });

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('leaves out undefined members as JSON does, and skips only top-level keys', () => {
    expect(canonicalJson({ a: undefined, s: 1, n: { s: 2 } }, (k) => k === 's')).toBe(
      '{"n":{"s":2}}',
    );
  });

  it('keeps a `__proto__` key as the member it is, never as a prototype', () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(parsed, (k) => k === 'b')).toBe('{"__proto__":{"x":1}}');
    expect(canonicalJson(JSON.parse('{"b":1}'))).toBe('{"b":1}');
  });

  it('escapes strings as JSON does', () => {
    expect(canonicalJson({ 'k"': 'line\nbreak \u2028' })).toBe(
      JSON.stringify({ 'k"': 'line\nbreak \u2028' }),
    );
  });
});

describe('cacheKey', () => {
  it('is the same for bodies that differ only in key order, stream, stream_options or model alias', () => {
    const reordered = keyOf({
      body: {
        temperature: 0.2,
        stream_options: { include_usage: true },
        stream: true,
        messages: [{ content: 'Hi', role: 'user' }],
        model: 'gpt',
      },
    });
    expect(reordered).toBe(keyOf({}));
    expect(keyOf({})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs with anything that changes the answer', () => {
    const keys = [
      keyOf({}),
      keyOf({ format: 'messages' }),
      keyOf({ model: 'other' }),
      keyOf({ candidates: ['gpt', 'gpt-mini'] }),
      keyOf({ scope: 'team:b' }),
      keyOf({ scope: 'key:abc' }),
      keyOf({ protections: ['system-prompt-filter'] }),
      keyOf({ headers: { 'anthropic-beta': 'output-128k-2025-02-19' } }),
      keyOf({ headers: { 'anthropic-version': '2023-06-01' } }),
      keyOf({ body: { ...base.body, temperature: 0.3 } }),
      keyOf({ body: { ...base.body, messages: [{ role: 'user', content: 'Hi!' }] } }),
      // A nested `stream` field is content, not delivery.
      keyOf({ body: { ...base.body, metadata: { stream: 'x' } } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('does not read headers that do not change the answer', () => {
    expect(keyOf({ headers: { 'user-agent': 'x', 'cache-control': 'no-cache' } })).toBe(keyOf({}));
  });
});

describe('cacheDirectives', () => {
  it('reads no-cache and no-store in any case, order and list form', () => {
    expect(cacheDirectives(undefined)).toEqual({ noCache: false, noStore: false });
    expect(cacheDirectives('no-cache')).toEqual({ noCache: true, noStore: false });
    expect(cacheDirectives('max-age=0, No-Store')).toEqual({ noCache: false, noStore: true });
    expect(cacheDirectives(['private', 'no-cache, no-store'])).toEqual({
      noCache: true,
      noStore: true,
    });
    expect(cacheDirectives('no-cachex, xno-store')).toEqual({ noCache: false, noStore: false });
  });
});
