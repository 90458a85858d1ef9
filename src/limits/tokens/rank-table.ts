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

  /**
   * Reads js-tiktoken's `bpe_ranks` text: one line per run of consecutive ranks,
   * `<ignored> <first rank> <base64 token> <base64 token> ...`.
   */
  constructor(bpeRanks: string) {
    let count = 0;
    for (let i = 0; i < bpeRanks.length; i++) {
      if (bpeRanks.charCodeAt(i) === 0x20) {
        count++;
      }
    }
    // A space precedes each token (and the line's first rank), so `count` is an upper
    // bound; the base64 text's length bounds the decoded bytes.
    const bytes = Buffer.allocUnsafe(bpeRanks.length);
    const starts = new Uint32Array(count + 1);
    const ranks = new Uint32Array(count);
    let n = 0;
    let used = 0;
    for (const line of bpeRanks.split('\n')) {
      if (line === '') {
        continue;
      }
      const fields = line.split(' ');
      const first = Number(fields[1]);
      for (let f = 2; f < fields.length; f++) {
        starts[n] = used;
        ranks[n] = first + f - 2;
        used += bytes.write(fields[f], used, 'base64');
        n++;
      }
    }
    starts[n] = used;
    // A plain Uint8Array, like the callers' buffers: one element kind keeps lookups monomorphic.
    this.bytes = new Uint8Array(used);
    this.bytes.set(bytes.subarray(0, used));
    this.starts = starts.slice(0, n + 1);
    this.ranks = ranks.slice(0, n);
    let size = 1;
    while (size < n * 2) {
      size <<= 1;
    }
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let t = 0; t < n; t++) {
      let slot = hashOf(this.bytes, this.starts[t], this.starts[t + 1]) & this.mask;
      while (this.slots[slot] !== 0) {
        slot = (slot + 1) & this.mask;
      }
      this.slots[slot] = t + 1;
    }
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

/** FNV-1a over a byte range (the multiply as shifts: Math.imul is slow under jest's vm sandbox). */
function hashOf(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    h ^= buf[i];
    h = (h + (h << 1) + (h << 4) + (h << 7) + (h << 8) + (h << 24)) | 0;
  }
  return h >>> 0;
}
