/** The suffix automaton of the secrets' symbols that both checks of the leak matcher walk. */

// Local aliases: a global lookup per call is slow where the global object is not the
// realm's own (jest's vm contexts), and these sit in the hot loops.
const { imul, min, max } = Math;
export const INF = 0x3fffffff;

/** Growable Int32 list (construction only). */
class IntList {
  data = new Int32Array(64);
  length = 0;

  push(value: number): number {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length] = value;
    return this.length++;
  }
}

function mix(state: number, sym: number): number {
  let h = imul(state, 0x9e3779b1) ^ imul(sym + 0x632be5ab, 0x85ebca77);
  h ^= h >>> 15;
  h = imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 13);
}

/** Open-addressing map (state, symbol) -> state. */
class TransitionTable {
  size = 0;
  private states: Int32Array;
  private syms: Int32Array;
  private targets: Int32Array;
  private mask: number;

  constructor(expected: number) {
    let capacity = 16;
    while (capacity < expected * 2) {
      capacity *= 2;
    }
    this.states = new Int32Array(capacity).fill(-1);
    this.syms = new Int32Array(capacity);
    this.targets = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  get(state: number, sym: number): number {
    const i = this.slot(state, sym);
    return this.states[i] === -1 ? -1 : this.targets[i];
  }

  /** Sets a transition; true when it is new. */
  set(state: number, sym: number, target: number): boolean {
    const i = this.slot(state, sym);
    this.targets[i] = target;
    if (this.states[i] !== -1) {
      return false;
    }
    this.states[i] = state;
    this.syms[i] = sym;
    this.size += 1;
    if (this.size * 3 > this.states.length * 2) {
      this.resize(this.states.length * 2);
    }
    return true;
  }

  get bytes(): number {
    return this.states.byteLength * 3;
  }

  /** Shrinks to a load of at most 3/4 once nothing more is added. */
  compact(): void {
    let capacity = 16;
    while (capacity * 3 < this.size * 4) {
      capacity *= 2;
    }
    if (capacity < this.states.length) {
      this.resize(capacity);
    }
  }

  private slot(state: number, sym: number): number {
    let i = mix(state, sym) & this.mask;
    for (;;) {
      const s = this.states[i];
      if (s === -1 || (s === state && this.syms[i] === sym)) {
        return i;
      }
      i = (i + 1) & this.mask;
    }
  }

  private resize(capacity: number): void {
    const { states, syms, targets } = this;
    this.states = new Int32Array(capacity).fill(-1);
    this.syms = new Int32Array(capacity);
    this.targets = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < states.length; i += 1) {
      if (states[i] !== -1) {
        const j = this.slot(states[i], syms[i]);
        this.states[j] = states[i];
        this.syms[j] = syms[i];
        this.targets[j] = targets[i];
      }
    }
  }
}

/**
 * Suffix automaton of the secrets' symbols (words or letters), each secret followed by a
 * separator symbol of its own so no match crosses two secrets. A string is *live* when it
 * begins a leak window of some secret: it occurs at a position p <= (secret length - window),
 * or is at least a window long. With `slack` of an occurrence ending at position e of its
 * secret = e + 1 - (secret length - window), a string of length k in state v is live iff
 * k >= minSlack[v] (the least slack over the state's end positions).
 */
export class Automaton {
  readonly link: Int32Array;
  readonly len: Int32Array;
  readonly minSlack: Int32Array;
  readonly table: TransitionTable;
  /** Word level: per state, its transitions sorted by symbol and a min tree over their minSlack. */
  private rows: Int32Array | undefined;
  private rowSyms: Int32Array | undefined;
  private tree: Int32Array | undefined;
  /** Word level, secrets shorter than the window: lengths ending in each state, and above it. */
  private shortHere: Map<number, number[]> | undefined;
  private shortAbove: Int32Array | undefined;
  /** Transition lists of the construction, kept until `indexRanges` or `dropEdges`. */
  private edges: { head: Int32Array; sym: Int32Array; next: Int32Array; count: number } | undefined;

  constructor(syms: Int32Array, slack: Int32Array) {
    const n = syms.length;
    const link = new Int32Array(2 * n + 1);
    const len = new Int32Array(2 * n + 1);
    const minSlack = new Int32Array(2 * n + 1).fill(INF);
    const table = new TransitionTable(2 * n);
    const edgeHead = new Int32Array(2 * n + 1).fill(-1);
    const edgeSym = new IntList();
    const edgeNext = new IntList();
    const set = (state: number, sym: number, target: number): void => {
      if (table.set(state, sym, target)) {
        edgeSym.push(sym);
        edgeHead[state] = edgeNext.push(edgeHead[state]);
      }
    };
    link[0] = -1;
    let count = 1;
    let last = 0;
    for (let i = 0; i < n; i += 1) {
      const c = syms[i];
      const cur = count++;
      len[cur] = len[last] + 1;
      minSlack[cur] = slack[i];
      let p = last;
      while (p !== -1 && table.get(p, c) < 0) {
        set(p, c, cur);
        p = link[p];
      }
      if (p === -1) {
        link[cur] = 0;
      } else {
        const q = table.get(p, c);
        if (len[p] + 1 === len[q]) {
          link[cur] = q;
        } else {
          const clone = count++;
          len[clone] = len[p] + 1;
          link[clone] = link[q];
          for (let e = edgeHead[q]; e !== -1; e = edgeNext.data[e]) {
            const sym = edgeSym.data[e];
            set(clone, sym, table.get(q, sym));
          }
          while (p !== -1 && table.get(p, c) === q) {
            table.set(p, c, clone);
            p = link[p];
          }
          link[q] = clone;
          link[cur] = clone;
        }
      }
      last = cur;
    }
    table.compact();
    this.table = table;
    this.link = link.slice(0, count);
    this.len = len.slice(0, count);
    this.minSlack = minSlack.slice(0, count);
    // End positions of a state are those of its link-tree subtree: children are longer.
    for (const v of this.byLength().reverse()) {
      if (v !== 0) {
        const up = this.link[v];
        this.minSlack[up] = min(this.minSlack[up], this.minSlack[v]);
      }
    }
    this.edges = { head: edgeHead, sym: edgeSym.data, next: edgeNext.data, count: edgeSym.length };
  }

  get states(): number {
    return this.len.length;
  }

  /** Memory held, roughly, in bytes. */
  get bytes(): number {
    return (
      this.len.byteLength * 3 +
      this.table.bytes +
      (this.rows?.byteLength ?? 0) +
      (this.rowSyms?.byteLength ?? 0) +
      (this.tree?.byteLength ?? 0) +
      (this.shortAbove?.byteLength ?? 0)
    );
  }

  /** States by increasing length (a state's link comes before it). */
  byLength(): Int32Array {
    const { len } = this;
    let longest = 0;
    for (let v = 0; v < len.length; v += 1) {
      longest = max(longest, len[v]);
    }
    const starts = new Int32Array(longest + 2);
    for (let v = 0; v < len.length; v += 1) {
      starts[len[v] + 1] += 1;
    }
    for (let l = 1; l <= longest + 1; l += 1) {
      starts[l] += starts[l - 1];
    }
    const order = new Int32Array(len.length);
    for (let v = 0; v < len.length; v += 1) {
      order[starts[len[v]]++] = v;
    }
    return order;
  }

  dropEdges(): void {
    this.edges = undefined;
  }

  /** Prepares `minSlackIn`: per state, transitions sorted by symbol and a min tree. */
  indexRanges(): void {
    const edges = this.edges as NonNullable<Automaton['edges']>;
    this.edges = undefined;
    const states = this.states;
    const rows = new Int32Array(states + 1);
    const rowSyms = new Int32Array(edges.count);
    let at = 0;
    for (let v = 0; v < states; v += 1) {
      rows[v] = at;
      for (let e = edges.head[v]; e !== -1; e = edges.next[e]) {
        rowSyms[at++] = edges.sym[e];
      }
      rowSyms.subarray(rows[v], at).sort();
    }
    rows[states] = at;
    const tree = new Int32Array(2 * at);
    for (let v = 0; v < states; v += 1) {
      for (let i = rows[v]; i < rows[v + 1]; i += 1) {
        tree[at + i] = this.minSlack[this.table.get(v, rowSyms[i])];
      }
    }
    for (let i = at - 1; i > 0; i -= 1) {
      tree[i] = min(tree[2 * i], tree[2 * i + 1]);
    }
    this.rows = rows;
    this.rowSyms = rowSyms;
    this.tree = tree;
  }

  /** Least minSlack over the states `v` goes to on a symbol in [lo, hi]. */
  minSlackIn(v: number, lo: number, hi: number): number {
    const rows = this.rows as Int32Array;
    const rowSyms = this.rowSyms as Int32Array;
    const tree = this.tree as Int32Array;
    const end = rows[v + 1];
    let l = lowerBound(rowSyms, rows[v], end, lo);
    let r = lowerBound(rowSyms, l, end, hi + 1);
    let best = INF;
    const size = rowSyms.length;
    for (l += size, r += size; l < r; l >>= 1, r >>= 1) {
      if (l & 1) {
        best = min(best, tree[l++]);
      }
      if (r & 1) {
        best = min(best, tree[--r]);
      }
    }
    return best;
  }

  /** Registers whole secrets shorter than the window (`lengths` of them, by their symbols). */
  indexShort(secrets: readonly Int32Array[]): void {
    const here = new Map<number, number[]>();
    for (const secret of secrets) {
      let v = 0;
      for (const sym of secret) {
        v = this.table.get(v, sym);
      }
      // Distinct lengths only: many copies of one short secret (or spellings that fold to
      // the same words) end in the same state, and would make this and shortLeak quadratic.
      // At most `need` distinct lengths end in one state.
      const lengths = here.get(v);
      if (lengths === undefined) {
        here.set(v, [secret.length]);
      } else if (!lengths.includes(secret.length)) {
        lengths.push(secret.length);
      }
    }
    const above = new Int32Array(this.states);
    for (const v of this.byLength()) {
      if (v !== 0) {
        const up = this.link[v];
        let best = above[up];
        for (const length of here.get(up) ?? []) {
          best = max(best, length);
        }
        above[v] = best;
      }
    }
    this.shortHere = here;
    this.shortAbove = above;
  }

  /** The longest short secret that ends the string of length `k` in state `v`, else 0. */
  shortLeak(v: number, k: number): number {
    if (this.shortAbove === undefined) {
      return 0;
    }
    let best = this.shortAbove[v];
    for (const length of this.shortHere?.get(v) ?? []) {
      if (length <= k && length > best) {
        best = length;
      }
    }
    return best;
  }
}

function lowerBound(a: Int32Array, from: number, to: number, value: number): number {
  while (from < to) {
    const mid = (from + to) >>> 1;
    if (a[mid] < value) {
      from = mid + 1;
    } else {
      to = mid;
    }
  }
  return from;
}
