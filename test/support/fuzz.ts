import fc from 'fast-check';

/**
 * Mutations of valid requests for the property-based fuzz suite: each case takes a valid
 * body, picks places in it and replaces, adds or removes values with hostile ones, then
 * serialises it, sometimes with raw-byte damage that JSON.stringify cannot produce
 * (duplicate keys, invalid UTF-8, a byte-order mark, truncation).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Keys that reach Object.prototype members when looked up on an ordinary object. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
];

const CONTROL = fc
  .array(fc.integer({ min: 0, max: 0x1f }), { minLength: 1, maxLength: 8 })
  .map((codes) => String.fromCharCode(...codes));

/**
 * A string standing for a value nested N levels deep, spliced in by serialise(): built as
 * text, because a recursive copy or print of such a value would overflow the test's stack.
 */
const DEEP = '\u0001deep:';
const DEEP_MARK = /"\\u0001deep:(\d+)"/g;

function deepText(depth: number): string {
  return '[{"a":'.repeat(depth >> 1) + '[1]' + '}]'.repeat(depth >> 1);
}

/** Values that break assumptions: wrong types, nulls, extremes, deep and huge values. */
export const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    'null',
    '[DONE]',
    'data: x\n\n',
    '\u0000',
    '\ud800',
    '\u202e\u200b',
    [],
    {},
    [null],
    [[]],
    { type: '__proto__' },
    { type: 'constructor' },
    { type: 'text', text: null },
    { role: 'user', content: null },
    { role: 'system', content: [] },
  ),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  CONTROL,
  fc.constantFrom(...PROTOTYPE_KEYS),
  fc.integer({ min: 50, max: 100_000 }).map((d) => `${DEEP}${d}`),
  fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
  fc.array(fc.constantFrom<Json>(null, 1, 'x', {}, []), { maxLength: 4 }),
  fc.dictionary(fc.constantFrom(...PROTOTYPE_KEYS, 'type', 'text', 'role'), fc.constant<Json>(1), {
    maxKeys: 3,
  }),
);

/** One edit at a path chosen by index among the body's containers. */
export type Edit =
  | { op: 'set'; at: number; key: number; value: Json }
  | { op: 'add'; at: number; key: string; value: Json }
  | { op: 'delete'; at: number; key: number };

export const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    at: fc.nat(),
    key: fc.nat(),
    value: hostileValue,
  }),
  fc.record({
    op: fc.constant('add' as const),
    at: fc.nat(),
    key: fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 12 })),
    value: hostileValue,
  }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), key: fc.nat() }),
);

/** Damage to the serialised bytes, applied after the edits. */
export type Damage = 'none' | 'duplicate-key' | 'invalid-utf8' | 'bom' | 'truncate' | 'nul';

export const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Damage>('none') },
  { weight: 1, arbitrary: fc.constantFrom<Damage>('duplicate-key', 'invalid-utf8', 'bom') },
  { weight: 1, arbitrary: fc.constantFrom<Damage>('truncate', 'nul') },
);

function containers(v: Json, out: (Json[] | { [key: string]: Json })[]): void {
  if (Array.isArray(v)) {
    out.push(v);
    v.forEach((x) => containers(x, out));
  } else if (v !== null && typeof v === 'object') {
    out.push(v);
    Object.values(v).forEach((x) => containers(x, out));
  }
}

function defineKey(target: { [key: string]: Json }, key: string, value: Json): void {
  // A "__proto__" key must become data, as JSON.parse makes it, not a prototype swap.
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Applies the edits to a deep copy of `base`. */
export function mutate(base: Json, edits: Edit[]): Json {
  const body = JSON.parse(JSON.stringify(base)) as Json;
  for (const edit of edits) {
    // A copy: inserted by reference, a value a later edit adds into could end up inside
    // itself (a cycle JSON cannot serialize), and fast-check's own value would be changed.
    const e: Edit = edit.op === 'delete' ? edit : { ...edit, value: structuredClone(edit.value) };
    const all: (Json[] | { [key: string]: Json })[] = [];
    containers(body, all);
    const target = all[e.at % all.length];
    if (Array.isArray(target)) {
      if (e.op === 'add') {
        target.push(e.value);
      } else if (target.length > 0) {
        const i = e.key % target.length;
        if (e.op === 'set') {
          target[i] = e.value;
        } else {
          target.splice(i, 1);
        }
      }
      continue;
    }
    const keys = Object.keys(target);
    if (e.op === 'add') {
      defineKey(target, e.key, e.value);
    } else if (keys.length > 0) {
      const key = keys[e.key % keys.length];
      if (e.op === 'set') {
        defineKey(target, key, e.value);
      } else {
        delete target[key];
      }
    }
  }
  return body;
}

/** Serialises a mutated body and applies the byte damage. */
export function serialise(body: Json, how: Damage): Buffer {
  const text = JSON.stringify(body).replace(DEEP_MARK, (_m, d: string) => deepText(Number(d)));
  switch (how) {
    case 'none':
      return Buffer.from(text);
    case 'duplicate-key':
      // The same top-level key twice: JSON.parse keeps the last, which must still be checked.
      return Buffer.from(text.replace(/^\{/, '{"model":null,"messages":7,'));
    case 'invalid-utf8':
      return Buffer.concat([
        Buffer.from(text.slice(0, -1)),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('}'),
      ]);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    case 'truncate':
      return Buffer.from(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
    case 'nul':
      return Buffer.from(text.replace(/"([^"]*)"/, '"$1\u0000"'));
  }
}
