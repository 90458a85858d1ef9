/**
 * A tiktoken rank table (token bytes → rank) held in four typed arrays instead of a
 * `Map<string, number>`.
 *
 * Why: o200k_base and cl100k_base together are 300,000 tokens. As map entries they were
 * 300,000 heap strings plus hash tables, about 25 MB of a replica's idle heap, and every
 * major GC had to walk them. Here they are ~8 MB of flat buffers the GC never traverses.
 *
 * Lookups take a byte range of a caller's buffer, so the BPE merge loop compares bytes
 * in place instead of slicing a string for every candidate pair.
 */
export class RankTable {
  /** Every token's bytes, back to back; token i is bytes[starts[i]] .. bytes[starts[i + 1]]. */
  private readonly bytes: Uint8Array;
  private readonly starts: Uint32Array;
  private readonly ranks: Uint32Array;
  /** Open addressing, linear probing: token index + 1, 0 for an empty slot. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  /** A table from its arrays (see {@link parts}); `slots` has a power-of-two length. */
  constructor(parts: RankTableParts) {
    this.bytes = parts.bytes;
    this.starts = parts.starts;
    this.ranks = parts.ranks;
    this.slots = parts.slots;
    this.mask = parts.slots.length - 1;
  }

  /** The arrays behind the table, e.g. to write them to a file (rank-cache.ts). */
  parts(): RankTableParts {
    return { bytes: this.bytes, starts: this.starts, ranks: this.ranks, slots: this.slots };
  }

  /**
   * Reads js-tiktoken's `bpe_ranks` text: one line per run of consecutive ranks,
   * `<ignored> <first rank> <base64 token> <base64 token> ...`. One pass over the text,
   * decoding base64 and hashing each token's bytes as they come: splitting it into 300,000
   * strings and decoding each was ~100 ms of every cold start.
   */
  static fromText(bpeRanks: string): RankTable {
    const text = bpeRanks;
    const length = text.length;
    // Each token takes a space and at least 4 base64 characters; 4 characters give 3 bytes.
    const maxTokens = Math.ceil(length / 5) + 1;
    const bytes = new Uint8Array(Math.ceil((length * 3) / 4));
    const starts = new Uint32Array(maxTokens + 1);
    const ranks = new Uint32Array(maxTokens);
    const hashes = new Int32Array(maxTokens);
    let n = 0;
    let used = 0;
    let i = 0;
    while (i < length) {
      // The ignored first field, then the rank of the line's first token.
      while (i < length && text.charCodeAt(i) !== SPACE && text.charCodeAt(i) !== NEWLINE) {
        i++;
      }
      if (text.charCodeAt(i) !== SPACE) {
        i++; // an empty or a malformed line
        continue;
      }
      i++;
      let rank = 0;
      for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i)) {
        rank = rank * 10 + (c - 0x30);
      }
      while (text.charCodeAt(i) === SPACE) {
        i++;
        starts[n] = used;
        ranks[n] = rank++;
        let h = FNV_OFFSET;
        let acc = 0;
        let bits = 0;
        for (; i < length; i++) {
          const c = text.charCodeAt(i);
          if (c === SPACE || c === NEWLINE) {
            break;
          }
          const v = c < 128 ? BASE64[c] : -1;
          if (v < 0) {
            continue; // `=` padding
          }
          acc = ((acc << 6) | v) & 0xffff;
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            const byte = (acc >> bits) & 0xff;
            bytes[used++] = byte;
            h = fnvStep(h, byte);
          }
        }
        hashes[n++] = h;
      }
    }
    starts[n] = used;
    let size = 1;
    while (size < n * 2) {
      size <<= 1;
    }
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let t = 0; t < n; t++) {
      let slot = hashes[t] & mask;
      while (slots[slot] !== 0) {
        slot = (slot + 1) & mask;
      }
      slots[slot] = t + 1;
    }
    return new RankTable({
      bytes: bytes.slice(0, used),
      starts: starts.slice(0, n + 1),
      ranks: ranks.slice(0, n),
      slots,
    });
  }

  /** Number of tokens in the table. */
  get size(): number {
    return this.ranks.length;
  }

  /** The rank of the token spelled by `buf[start..end)`, or -1 when it is not a token. */
  rank(buf: Uint8Array, start: number, end: number): number {
    const len = end - start;
    let slot = hashOf(buf, start, end) & this.mask;
    for (;;) {
      const entry = this.slots[slot];
      if (entry === 0) {
        return -1;
      }
      const t = entry - 1;
      const at = this.starts[t];
      if (this.starts[t + 1] - at === len && this.sameBytes(at, buf, start, len)) {
        return this.ranks[t];
      }
      slot = (slot + 1) & this.mask;
    }
  }

  private sameBytes(at: number, buf: Uint8Array, start: number, len: number): boolean {
    const bytes = this.bytes;
    for (let i = 0; i < len; i++) {
      if (bytes[at + i] !== buf[start + i]) {
        return false;
      }
    }
    return true;
  }
}

/** The four arrays of a {@link RankTable}. */
export interface RankTableParts {
  bytes: Uint8Array;
  starts: Uint32Array;
  ranks: Uint32Array;
  slots: Int32Array;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
const FNV_OFFSET = 0x811c9dc5 | 0;

/** Value of each base64 character (standard alphabet), -1 for anything else. */
const BASE64 = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  .split('')
  .forEach((ch, value) => (BASE64[ch.charCodeAt(0)] = value));

/** One byte of FNV-1a (the multiply as shifts: Math.imul is slow under jest's vm sandbox). */
function fnvStep(h: number, byte: number): number {
  const x = h ^ byte;
  return (x + (x << 1) + (x << 4) + (x << 7) + (x << 8) + (x << 24)) | 0;
}

/** FNV-1a over a byte range, as the table was built with. */
function hashOf(buf: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) {
    h = fnvStep(h, buf[i]);
  }
  return h;
}
