import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { BpeCounter, MAX_PIECE_BYTES } from './bpe-counter';
import { RankTable } from './rank-table';

/* eslint-disable @typescript-eslint/no-require-imports */
const RANKS: Record<string, TiktokenBPE> = {
  o200k_base: require('js-tiktoken/ranks/o200k_base') as TiktokenBPE,
  cl100k_base: require('js-tiktoken/ranks/cl100k_base') as TiktokenBPE,
};
/* eslint-enable @typescript-eslint/no-require-imports */

const CORPUS: Record<string, string> = {
  prose:
    'The gateway runs as several replicas behind a load balancer; a limit that each replica counts on its own is not a limit. ' +
    "It's 2026, and we'd rather not overshoot: 1,234,567 tokens/min.",
  code: 'function add(a: number, b: number): number {\n\treturn a + b; // sum\n}\n\n    const x = [1, 2, 3];\n',
  json: JSON.stringify({
    type: 'object',
    properties: { city: { type: 'string', enum: ['Paris', 'Zürich'] } },
  }),
  cjk: '漢字仮名交じり文は日本語の表記法です。東京都は日本の首都であり、人口は約千四百万人です。',
  mixed: '😀🎉👍🏽 café naïve résumé Ελληνικά русский текст العربية हिन्दी',
  whitespace: '    \n\t\t  x  \n\n\n   y\r\n',
  special: 'before <|endoftext|> after <|endofprompt|>',
  base64: Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256)).toString('base64'),
};

describe.each(Object.keys(RANKS))('BpeCounter (%s)', (name) => {
  const reference = new Tiktoken(RANKS[name]);
  const table = RankTable.fromText(RANKS[name].bpe_ranks);
  const counter = new BpeCounter(RANKS[name].pat_str, table);

  it.each(Object.keys(CORPUS))('counts exactly as js-tiktoken encode() on %s text', (kind) => {
    const text = CORPUS[kind];
    expect(counter.count(text)).toBe(reference.encode(text, [], []).length);
  });

  it('gives the same count twice (the piece cache changes nothing)', () => {
    const text = Object.values(CORPUS).join('\n');
    expect(counter.count(text)).toBe(counter.count(text));
    expect(counter.count(text)).toBe(reference.encode(text, [], []).length);
  });

  it('counts the empty string as zero tokens', () => {
    expect(counter.count('')).toBe(0);
  });

  /**
   * The byte spans `count(text)` merged. A merge is quadratic in its span, so spans of at
   * most MAX_PIECE_BYTES covering the text once make the whole count linear: an exact
   * check of what bounds the cost, where a clock would only sample it.
   */
  function mergedSpans(text: string): number[] {
    const fresh = new BpeCounter(RANKS[name].pat_str, table);
    const merge = jest.spyOn(fresh as unknown as { merge(s: number, e: number): number }, 'merge');
    fresh.count(text);
    return merge.mock.calls.map(([start, end]) => end - start);
  }

  it('counts a 200 000-character run of one letter close to the exact count, in chunks', () => {
    const n = counter.count('a'.repeat(200_000));
    // Exact is 200000 / 8 = 25000 for both encodings; chunking loses at most one merge per chunk.
    expect(n).toBeGreaterThanOrEqual(25_000);
    expect(n).toBeLessThanOrEqual(25_000 + 200_000 / MAX_PIECE_BYTES);
    const spans = mergedSpans('a'.repeat(200_000));
    expect(Math.max(...spans)).toBe(MAX_PIECE_BYTES);
    expect(spans.reduce((a, b) => a + b, 0)).toBe(200_000);
  });

  it('counts an unspaced CJK paragraph within 5% of exact, in chunks', () => {
    const text =
      '漢字仮名交じり文は日本語の表記法です東京都は日本の首都であり人口は約千四百万人です'.repeat(
        40,
      );
    const n = counter.count(text);
    const exact = reference.encode(text.slice(0, 300), [], []).length * (text.length / 300);
    expect(Math.abs(n - exact) / exact).toBeLessThan(0.05);
    const spans = mergedSpans(text);
    expect(Math.max(...spans)).toBe(MAX_PIECE_BYTES);
    expect(spans.reduce((a, b) => a + b, 0)).toBe(Buffer.byteLength(text));
  });
});
