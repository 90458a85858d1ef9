import { endianness } from 'node:os';
import { RankTable } from './rank-table';

/**
 * A rank table in binary, as `npm run build` writes it beside the compiled code: the four
 * typed arrays byte for byte, read back as views of the file instead of decoding
 * js-tiktoken's base64 text (about 65 ms of every cold start for the two tables).
 *
 * Layout: the magic `RKT1` and the header's length in bytes (u32 each), the header as
 * JSON, zero padding to a multiple of 4, then `starts`, `ranks` and `slots` (32-bit) and
 * `bytes`. Numbers are in the byte order of the machine that built the file, as typed
 * arrays are written as they lie in memory: a machine of the other order (s390x given a
 * dist/ built on x86) reads the magic reversed and decodes the text instead. The header
 * names the source the table was built from; a reader takes the table only for the same
 * source, so that a newer js-tiktoken falls back to its text instead of counting with
 * stale ranks.
 */
const MAGIC = 0x31544b52;

export interface RankCacheHeader {
  /** What the table was built from, e.g. `js-tiktoken@1.0.21 o200k_base 2325123`. */
  source: string;
  /** The encoding's split pattern (js-tiktoken's `pat_str`). */
  patStr: string;
  tokens: number;
  bytes: number;
  slots: number;
}

/** The file form of `table`, built from `source`, with its split pattern. */
export function encodeRankTable(table: RankTable, patStr: string, source: string): Buffer {
  const { bytes, starts, ranks, slots } = table.parts();
  const header: RankCacheHeader = {
    source,
    patStr,
    tokens: ranks.length,
    bytes: bytes.length,
    slots: slots.length,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(align4(8 + json.length));
  writeU32(prefix, MAGIC, 0);
  writeU32(prefix, json.length, 4);
  json.copy(prefix, 8);
  return Buffer.concat([prefix, view(starts), view(ranks), view(slots), view(bytes)]);
}

/**
 * The table in `file` if it was built from `source` and is whole; undefined otherwise
 * (another source, a truncated or foreign file). The table's arrays are views of `file`.
 */
export function decodeRankTable(
  file: Buffer,
  source: string,
): { table: RankTable; patStr: string } | undefined {
  if (file.length < 8 || readU32(file, 0) !== MAGIC) {
    return undefined;
  }
  const headerEnd = 8 + readU32(file, 4);
  let header: Partial<RankCacheHeader>;
  try {
    header = JSON.parse(file.toString('utf8', 8, headerEnd)) as Partial<RankCacheHeader>;
  } catch {
    return undefined;
  }
  const { tokens, bytes, slots, patStr } = header;
  if (
    header.source !== source ||
    typeof patStr !== 'string' ||
    !isCount(tokens) ||
    !isCount(bytes) ||
    !isCount(slots) ||
    slots < 2 ||
    (slots & (slots - 1)) !== 0
  ) {
    return undefined;
  }
  const at = align4(headerEnd);
  if (file.length !== at + 4 * (tokens + 1 + tokens + slots) + bytes) {
    return undefined;
  }
  // Views need 4-byte alignment; a file read whole starts its own buffer, so this is no copy.
  const data = (file.byteOffset & 3) === 0 ? file : Buffer.from(new Uint8Array(file).buffer);
  const base = data.byteOffset + at;
  const starts = new Uint32Array(data.buffer, base, tokens + 1);
  const ranks = new Uint32Array(data.buffer, base + 4 * (tokens + 1), tokens);
  const slotArray = new Int32Array(data.buffer, base + 4 * (2 * tokens + 1), slots);
  const byteArray = new Uint8Array(data.buffer, base + 4 * (2 * tokens + 1 + slots), bytes);
  return {
    table: new RankTable({ bytes: byteArray, starts, ranks, slots: slotArray }),
    patStr,
  };
}

const LITTLE_ENDIAN = endianness() === 'LE';

function writeU32(buf: Buffer, value: number, at: number): void {
  if (LITTLE_ENDIAN) {
    buf.writeUInt32LE(value, at);
  } else {
    buf.writeUInt32BE(value, at);
  }
}

function readU32(buf: Buffer, at: number): number {
  return LITTLE_ENDIAN ? buf.readUInt32LE(at) : buf.readUInt32BE(at);
}

function view(array: Uint8Array | Uint32Array | Int32Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}
