import { chunkText, CHUNK_OVERLAP } from './http-classifier.backend';
import { parseScores, requestBodies, ResponseShapeError, type FormatOptions } from './http-formats';
import { VerdictCache } from './verdict-cache';

const OPTIONS: FormatOptions = {
  labels: ['injection', 'malicious'],
  classIndex: 1,
  inputName: 'text',
};

describe('HTTP classifier shapes', () => {
  it('builds one batch body for TEI and KServe, one body per text for plain JSON', () => {
    expect(requestBodies('tei', ['a', 'b'], OPTIONS)).toEqual([
      { inputs: [['a'], ['b']], truncate: true },
    ]);
    expect(requestBodies('kserve', ['a', 'b'], OPTIONS)).toEqual([
      { inputs: [{ name: 'text', shape: [2], datatype: 'BYTES', data: ['a', 'b'] }] },
    ]);
    expect(requestBodies('json', ['a', 'b'], OPTIONS)).toEqual([{ text: 'a' }, { text: 'b' }]);
  });

  it('reads TEI label lists, batched or for a single input, case-insensitively', () => {
    const guard = (p: number): unknown[] => [
      { label: 'BENIGN', score: 1 - p },
      { label: 'MALICIOUS', score: p },
    ];
    expect(parseScores('tei', [[guard(0.9), guard(0.2)]], 2, OPTIONS)).toEqual([0.9, 0.2]);
    expect(parseScores('tei', [guard(0.7)], 1, OPTIONS)).toEqual([0.7]);
    // A model whose labels mean nothing to us scores 0, never an injection by accident.
    expect(parseScores('tei', [[[{ label: 'LABEL_0', score: 1 }]]], 1, OPTIONS)).toEqual([0]);
  });

  it('reads KServe probabilities, logits and one-score outputs', () => {
    const out = (shape: number[], data: number[]): unknown => ({
      outputs: [{ name: 'o', shape, datatype: 'FP32', data }],
    });
    expect(parseScores('kserve', [out([2, 2], [0.1, 0.9, 0.8, 0.2])], 2, OPTIONS)).toEqual([
      0.9, 0.2,
    ]);
    const [fromLogits] = parseScores('kserve', [out([1, 2], [0, Math.log(3)])], 1, OPTIONS);
    expect(fromLogits).toBeCloseTo(0.75, 6);
    expect(parseScores('kserve', [out([2], [0.3, 0])], 2, OPTIONS)).toEqual([0.3, 0]);
    expect(parseScores('kserve', [out([1, 1], [2])], 1, OPTIONS)[0]).toBeCloseTo(0.8808, 3);
  });

  it('reads plain JSON label and score, inverting a benign label', () => {
    expect(
      parseScores(
        'json',
        [
          { label: 'INJECTION', score: 0.8 },
          { label: 'SAFE', score: 0.9 },
        ],
        2,
        OPTIONS,
      ).map((x) => Number(x.toFixed(6))),
    ).toEqual([0.8, 0.1]);
  });

  it.each([
    ['tei', [{ error: 'x' }], 1],
    ['tei', [[[{ label: 'INJECTION', score: 0.5 }]]], 2],
    ['tei', [[[{ label: 'INJECTION', score: 'high' }]]], 1],
    ['kserve', [{ outputs: [] }], 1],
    ['kserve', [{ outputs: [{ shape: [2, 2], data: [0.1, 0.9] }] }], 2],
    ['kserve', [{ outputs: [{ shape: [1, 1], data: [null] }] }], 1],
    ['json', [{ verdict: 'injection' }], 1],
  ] as const)('refuses a %s answer of another shape (%j)', (format, bodies, count) => {
    expect(() => parseScores(format, bodies, count, OPTIONS)).toThrow(ResponseShapeError);
  });
});

describe('chunkText', () => {
  it('keeps a short text whole and covers a long one with overlapping chunks', () => {
    expect(chunkText('short', 1000, 8)).toEqual(['short']);
    const text = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(
      '',
    );
    const chunks = chunkText(text, 1000, 8);
    expect(chunks.every((c) => c.length <= 1000)).toBe(true);
    expect(chunks[0]).toBe(text.slice(0, 1000));
    expect(chunks[1].startsWith(text.slice(1000 - CHUNK_OVERLAP, 1000))).toBe(true);
    expect(text.endsWith(chunks[chunks.length - 1])).toBe(true);
  });

  it('keeps the head and tail chunks within the budget', () => {
    const text = `HEAD${'x'.repeat(50_000)}TAIL`;
    const chunks = chunkText(text, 1000, 4);
    expect(chunks).toHaveLength(4);
    expect(chunks[0].startsWith('HEAD')).toBe(true);
    expect(chunks[3].endsWith('TAIL')).toBe(true);
  });
});

describe('VerdictCache', () => {
  it('evicts the least recently used entry beyond its capacity', () => {
    const cache = new VerdictCache(2);
    const [a, b, c] = ['a', 'b', 'c'].map((t) => VerdictCache.key('http', undefined, t));
    cache.set(a, 0.1);
    cache.set(b, 0.2);
    expect(cache.get(a)).toBe(0.1); // a is now the most recent
    cache.set(c, 0.3);
    expect(cache.get(b)).toBeUndefined();
    expect(cache.get(a)).toBe(0.1);
    expect(cache.get(c)).toBe(0.3);
    expect(cache.size).toBe(2);
  });

  it('keys by backend, model and text, never holding the text', () => {
    const key = VerdictCache.key('judge', 'judge-mini', 'secret text');
    expect(key).not.toContain('secret');
    expect(key).not.toBe(VerdictCache.key('judge', 'other', 'secret text'));
    expect(key).not.toBe(VerdictCache.key('http', 'judge-mini', 'secret text'));
  });

  it('keeps nothing with capacity 0', () => {
    const cache = new VerdictCache(0);
    cache.set('k', 1);
    expect(cache.get('k')).toBeUndefined();
  });
});
