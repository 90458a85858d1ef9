import { extractJsonObject, jsonObjectsIn } from './json-reply';

describe('extractJsonObject', () => {
  it.each([
    ['a bare object', '{"verdict":"benign"}', { verdict: 'benign' }],
    [
      'a code fence',
      '```json\n{"verdict": "injection", "reason": "x"}\n```',
      { verdict: 'injection', reason: 'x' },
    ],
    ['prose around it', 'My answer: {"a":{"b":[1,2]}} - done', { a: { b: [1, 2] } }],
    ['braces in strings', '{"reason":"} {","ok":true}', { reason: '} {', ok: true }],
    ['an unclosed brace first', 'a { b {"ok":1}', { ok: 1 }],
  ])('finds the object in %s', (_what, text, expected) => {
    expect(extractJsonObject(text)).toEqual(expected);
  });

  it.each([
    ['no JSON', 'benign'],
    ['broken JSON', '{"verdict": benign}'],
    ['empty', ''],
  ])('gives undefined for %s', (_what, text) => {
    expect(extractJsonObject(text)).toBeUndefined();
  });
});

describe('jsonObjectsIn', () => {
  it('lists every top-level object in order, skipping the broken ones', () => {
    expect(jsonObjectsIn('{"a":1} then {oops} then {"b":{"c":2}}')).toEqual([
      { a: 1 },
      { b: { c: 2 } },
    ]);
  });

  it('does not scan past a long reply', () => {
    expect(jsonObjectsIn(`${' '.repeat(30_000)}{"a":1}`)).toEqual([]);
  });
});
