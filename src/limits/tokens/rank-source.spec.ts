import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { BpeCounter } from './bpe-counter';
import { decodeRankTable, encodeRankTable } from './rank-cache';
import {
  ENCODINGS,
  loadRankTable,
  parseRankModule,
  rankSourceId,
  writeRankCaches,
} from './rank-source';
import { RankTable } from './rank-table';

const TEXT = 'Tokens of the gateway: café, 漢字, 😀, {"json": [1, 2, 3]} and    spaces.';

describe('rank caches', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rank-cache-'));
    writeRankCaches(dir);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(ENCODINGS)('give %s the table and pattern its text gives', (encoding) => {
    const path = require.resolve(`js-tiktoken/ranks/${encoding}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const bpe = require(path) as TiktokenBPE;
    const fromText = RankTable.fromText(bpe.bpe_ranks);
    const cached = loadRankTable(encoding, dir);
    expect(cached.patStr).toBe(bpe.pat_str);
    expect(cached.table.parts()).toEqual(fromText.parts());
    const counter = (t: { patStr: string; table: RankTable }): number =>
      new BpeCounter(t.patStr, t.table).count(TEXT);
    expect(counter(cached)).toBe(counter({ patStr: bpe.pat_str, table: fromText }));
  });

  it('are read only for the js-tiktoken, encoding and rank file they were built from', () => {
    const path = require.resolve('js-tiktoken/ranks/cl100k_base');
    const source = rankSourceId('cl100k_base', path)!;
    expect(source).toMatch(/^js-tiktoken@\d+\.\d+\.\d+\S* cl100k_base \d+$/);
    const file = readFileSync(join(dir, 'cl100k_base.bin'));
    expect(decodeRankTable(file, source)).toBeDefined();
    expect(decodeRankTable(file, source.replace(/@[^ ]+/, '@0.0.1'))).toBeUndefined();
    expect(decodeRankTable(file, source.replace('cl100k_base', 'o200k_base'))).toBeUndefined();
  });

  it('are refused when truncated, padded or foreign, and the text is read instead', () => {
    const small = RankTable.fromText('x 0 YQ== Yg==\nx 5 YWI=\n');
    const file = encodeRankTable(small, 'p', 'src');
    expect(decodeRankTable(file, 'src')?.table.parts()).toEqual(small.parts());
    expect(decodeRankTable(file.subarray(0, file.length - 1), 'src')).toBeUndefined();
    expect(decodeRankTable(Buffer.concat([file, Buffer.alloc(4)]), 'src')).toBeUndefined();
    expect(decodeRankTable(Buffer.from('not a table at all'), 'src')).toBeUndefined();
    expect(decodeRankTable(Buffer.alloc(3), 'src')).toBeUndefined();
    // As a machine of the other byte order wrote it: magic and header length reversed.
    const swapped = Buffer.from(file);
    swapped.subarray(0, 8).swap32();
    expect(decodeRankTable(swapped, 'src')).toBeUndefined();
    const broken = Buffer.from(file);
    broken.writeUInt32LE(1_000_000, 4); // a header length past the end
    expect(decodeRankTable(broken, 'src')).toBeUndefined();

    const other = mkdtempSync(join(tmpdir(), 'rank-cache-'));
    try {
      writeFileSync(join(other, 'o200k_base.bin'), file);
      const loaded = loadRankTable('o200k_base', other);
      expect(loaded.table.size).toBeGreaterThan(199_000);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('hold a table whose file does not start its own buffer (no alignment assumed)', () => {
    const small = RankTable.fromText('x 0 YQ== Yg==\n');
    const file = encodeRankTable(small, 'p', 'src');
    const shifted = Buffer.concat([Buffer.alloc(1), file]).subarray(1);
    expect(shifted.byteOffset % 4).toBe(1);
    expect(decodeRankTable(shifted, 'src')?.table.rank(Buffer.from('b'), 0, 1)).toBe(1);
  });
});

describe('parseRankModule', () => {
  it.each(['o200k_base', 'cl100k_base'])('reads %s exactly as require does', (encoding) => {
    const path = require.resolve(`js-tiktoken/ranks/${encoding}`);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(parseRankModule(readFileSync(path, 'utf8'))).toEqual(require(path));
  });

  it.each([
    ['another module shape', 'exports.ranks = {"pat_str":"x","bpe_ranks":"y"};'],
    ['code before the object', 'const x = 1; module.exports = {"pat_str":"x","bpe_ranks":"y"};'],
    ['code after the object', 'module.exports = {"pat_str":"x","bpe_ranks":"y"}; exports.x = {};'],
    ['a table that is not JSON', "module.exports = {pat_str: 'x', bpe_ranks: 'y'};"],
    ['a table without ranks', 'module.exports = {"pat_str":"x"};'],
    ['no object', 'module.exports = 1;'],
  ])('leaves %s to require', (_name, text) => {
    expect(parseRankModule(text)).toBeUndefined();
  });

  it('takes a trailing semicolon and line break', () => {
    expect(parseRankModule('module.exports = {"pat_str":"x","bpe_ranks":"y"};\n')).toEqual({
      pat_str: 'x',
      bpe_ranks: 'y',
    });
  });
});
