import { own, setOwn } from './own';

describe('own / setOwn', () => {
  const table: Readonly<Record<string, number>> = { a: 1 };

  it.each([
    'constructor',
    'valueOf',
    'toString',
    'hasOwnProperty',
    '__proto__',
    '__defineGetter__',
  ])('finds nothing for the inherited name %s', (key) => {
    expect(own(table, key)).toBeUndefined();
  });

  it('finds own properties', () => {
    expect(own(table, 'a')).toBe(1);
    expect(own(JSON.parse('{"__proto__": 5}') as Record<string, number>, '__proto__')).toBe(5);
  });

  it('stores "__proto__" as data without swapping the prototype', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect((target as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(target)).toEqual(['__proto__']);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":true}}');
  });
});
