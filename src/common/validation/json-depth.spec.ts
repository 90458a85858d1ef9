import { exceedsJsonDepth } from './json-depth';

const bytes = (s: string): Buffer => Buffer.from(s);

describe('exceedsJsonDepth', () => {
  it('counts objects and arrays alike', () => {
    expect(exceedsJsonDepth(bytes('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
  });

  it('measures the deepest point, not the number of containers', () => {
    const wide = `[${Array.from({ length: 1000 }, () => '{"a":[1]}').join(',')}]`;
    expect(exceedsJsonDepth(bytes(wide), 3)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":"x\\"[[[[","b":1}'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":"x\\\\","b":[[1]]}'), 2)).toBe(true);
  });

  it('refuses a body of a hundred thousand brackets without recursing', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(exceedsJsonDepth(bytes(deep), 128)).toBe(true);
  });

  it('survives an unterminated string', () => {
    expect(exceedsJsonDepth(bytes('{"a":"[[[['), 1)).toBe(false);
  });
});
