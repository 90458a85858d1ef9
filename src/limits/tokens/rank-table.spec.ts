import type { TiktokenBPE } from 'js-tiktoken/lite';
import { RankTable } from './rank-table';

/* eslint-disable @typescript-eslint/no-require-imports */
const BPE: Record<string, TiktokenBPE> = {
  o200k_base: require('js-tiktoken/ranks/o200k_base') as TiktokenBPE,
  cl100k_base: require('js-tiktoken/ranks/cl100k_base') as TiktokenBPE,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** Every (token bytes, rank) of js-tiktoken's text, read the straightforward way. */
function entries(bpeRanks: string): [Buffer, number][] {
  const out: [Buffer, number][] = [];
  for (const line of bpeRanks.split('\n').filter(Boolean)) {
    const [, first, ...tokens] = line.split(' ');
    tokens.forEach((t, i) => out.push([Buffer.from(t, 'base64'), Number(first) + i]));
  }
  return out;
}

describe.each(Object.keys(BPE))('RankTable (%s)', (name) => {
  const all = entries(BPE[name].bpe_ranks);
  const table = RankTable.fromText(BPE[name].bpe_ranks);

  it('holds every token of the encoding, each with its rank', () => {
    expect(table.size).toBe(all.length);
    const wrong = all.filter(([bytes, rank]) => table.rank(bytes, 0, bytes.length) !== rank);
    expect(wrong).toEqual([]);
  });

  it('finds a token inside a larger buffer by its byte range', () => {
    const [bytes, rank] = all[all.length - 1];
    const framed = Buffer.concat([Buffer.from('xyz'), bytes, Buffer.from('!')]);
    expect(table.rank(framed, 3, 3 + bytes.length)).toBe(rank);
  });

  it('answers -1 for byte strings that are not tokens', () => {
    const known = new Set(all.map(([b]) => b.toString('latin1')));
    const candidates = [
      'zqxjkv',
      'the quick brown fox jumps',
      '\u0000\u0001\u0002',
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    ];
    for (const text of candidates) {
      const bytes = Buffer.from(text, 'latin1');
      expect(known.has(text)).toBe(false);
      expect(table.rank(bytes, 0, bytes.length)).toBe(-1);
    }
    expect(table.rank(Buffer.alloc(0), 0, 0)).toBe(-1);
  });
});
