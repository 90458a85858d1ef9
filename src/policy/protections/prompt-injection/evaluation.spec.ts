import {
  parseJsonl,
  percentile,
  qualityReport,
  rocAuc,
  splitBucket,
  thresholdAtFpr,
  type LabeledRow,
} from './evaluation';

describe('evaluation helpers', () => {
  it('parses JSONL rows and skips blank lines', () => {
    const rows = parseJsonl(
      '{"id":"a","text":"hi","label":0,"slice":"s","hard_negative":true}\n\n{"text":"x","label":1}\n',
    );
    expect(rows).toEqual([
      { id: 'a', text: 'hi', label: 0, slice: 's', hard_negative: true, lang: undefined },
      {
        id: undefined,
        text: 'x',
        label: 1,
        slice: undefined,
        hard_negative: false,
        lang: undefined,
      },
    ]);
  });

  it('names the line of a malformed row', () => {
    expect(() => parseJsonl('{"text":"a","label":1}\n{oops')).toThrow('line 2: not valid JSON');
    expect(() => parseJsonl('{"text":"a","label":3}')).toThrow('line 1');
  });

  it('computes ROC AUC with ties', () => {
    expect(rocAuc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0])).toBe(1);
    expect(rocAuc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0])).toBe(0);
    expect(rocAuc([0.5, 0.5], [1, 0])).toBe(0.5);
    expect(rocAuc([0.5], [1])).toBeNaN();
  });

  it('picks the lowest threshold within the false-positive budget, keeping ties together', () => {
    const negatives = Array.from({ length: 100 }, (_, i) => i / 100);
    const t = thresholdAtFpr(negatives, 0.05);
    expect(negatives.filter((s) => s >= t).length).toBe(5);
    expect(thresholdAtFpr([0.3, 0.3, 0.3], 0.01)).toBe(Infinity);
  });

  it('splits deterministically into [0, 1)', () => {
    expect(splitBucket('dev-00001')).toBe(splitBucket('dev-00001'));
    expect(splitBucket('dev-00001')).toBeGreaterThanOrEqual(0);
    expect(splitBucket('dev-00001')).toBeLessThan(1);
  });

  it('takes percentiles by rank', () => {
    expect(percentile([3, 1, 2, 4], 0.5)).toBe(2);
    expect(percentile([3, 1, 2, 4], 1)).toBe(4);
  });

  it('reports rates overall, on hard negatives and per slice', () => {
    const rows: LabeledRow[] = [
      { text: 'a', label: 1, slice: 'attack' },
      { text: 'b', label: 1, slice: 'attack' },
      { text: 'c', label: 0, slice: 'benign' },
      { text: 'd', label: 0, slice: 'tricky', hard_negative: true },
    ];
    const q = qualityReport(rows, [0.9, 0.4, 0.1, 0.6], 0.5);
    expect(q.tprAtDefault).toBe(0.5);
    expect(q.fprAtDefault).toBe(0.5);
    expect(q.hardNegatives).toBe(1);
    expect(q.hardNegativeFprAtDefault).toBe(1);
    expect(q.auc).toBe(0.75);
    expect(q.slices.map((s) => [s.slice, s.count, s.label, s.rateAtDefault])).toEqual([
      ['attack', 2, 1, 0.5],
      ['benign', 1, 0, 0],
      ['tricky', 1, 0, 1],
    ]);
  });
});
