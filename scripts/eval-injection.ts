/**
 * Measures the local prompt-injection detector on a labeled JSONL file.
 *
 *   npx ts-node --transpile-only scripts/eval-injection.ts [path] [--json] [--split fit|holdout]
 *     [--source user|tool_result|document] [--signals] [--errors N]
 *
 * path defaults to ../shared/data/prompt-injection/dev.jsonl (relative to the repo root).
 * Rows need `text` and `label` (1 = injection); `slice` and `hard_negative` are optional.
 * --split keeps the fit (70%) or holdout (30%) part of a deterministic hash split by id,
 * the same split scripts/fit-injection-weights.ts fits on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DEFAULT_THRESHOLD,
  collectSignals,
  detectInjection,
  warmUpDetector,
  type PartSource,
} from '../src/policy/protections/prompt-injection/detector';
import {
  parseJsonl,
  percentile,
  qualityReport,
  splitBucket,
  type LabeledRow,
  type QualityReport,
} from '../src/policy/protections/prompt-injection/evaluation';

const FIT_FRACTION = 0.7;

interface Args {
  path: string;
  json: boolean;
  split: 'all' | 'fit' | 'holdout';
  source: PartSource;
  signals: boolean;
  errors: number;
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: eval-injection [path] [--json] [--split fit|holdout] [--source user|tool_result|document] [--signals] [--errors N]\n`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    path: resolve(__dirname, '..', '..', 'shared', 'data', 'prompt-injection', 'dev.jsonl'),
    json: false,
    split: 'all',
    source: 'user',
    signals: false,
    errors: 0,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[i + 1];
      if (v === undefined) {
        usage(`${a} needs a value`);
      }
      i += 1;
      return v;
    };
    if (a === '--json') {
      args.json = true;
    } else if (a === '--signals') {
      args.signals = true;
    } else if (a === '--split') {
      const v = value();
      if (v !== 'fit' && v !== 'holdout' && v !== 'all') {
        usage(`--split must be fit, holdout or all, not "${v}"`);
      }
      args.split = v;
    } else if (a === '--source') {
      const v = value();
      if (v !== 'user' && v !== 'tool_result' && v !== 'document') {
        usage(`--source must be user, tool_result or document, not "${v}"`);
      }
      args.source = v;
    } else if (a === '--errors') {
      args.errors = Number.parseInt(value(), 10) || 0;
    } else if (a.startsWith('--')) {
      usage(`unknown option ${a}`);
    } else {
      args.path = resolve(process.cwd(), a);
    }
  }
  return args;
}

interface LatencyReport {
  /** Milliseconds per KB of text; rows under 1 KB are counted as 1 KB. */
  msPerKbMedian: number;
  msPerKbP99: number;
  msPerKbMax: number;
  /** Milliseconds per row. */
  msPerRowMedian: number;
  msPerRowP99: number;
  /** Total KB scanned per second over the whole file. */
  throughputKbPerSec: number;
}

function measureLatency(rows: readonly LabeledRow[], source: PartSource): LatencyReport {
  // Compile every regex and warm the JIT, so the timed pass measures steady state (a
  // gateway calls warmUpDetector at boot).
  warmUpDetector();
  for (const r of rows) {
    detectInjection(r.text, { source });
  }
  const perKb: number[] = [];
  const perRow: number[] = [];
  let totalMs = 0;
  let totalKb = 0;
  for (const r of rows) {
    const kb = Buffer.byteLength(r.text, 'utf8') / 1024;
    const start = process.hrtime.bigint();
    detectInjection(r.text, { source });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    perRow.push(ms);
    perKb.push(ms / Math.max(1, kb));
    totalMs += ms;
    totalKb += kb;
  }
  return {
    msPerKbMedian: percentile(perKb, 0.5),
    msPerKbP99: percentile(perKb, 0.99),
    msPerKbMax: percentile(perKb, 1),
    msPerRowMedian: percentile(perRow, 0.5),
    msPerRowP99: percentile(perRow, 0.99),
    throughputKbPerSec: totalMs > 0 ? (totalKb * 1000) / totalMs : Infinity,
  };
}

interface SignalStat {
  signal: string;
  positives: number;
  negatives: number;
  hardNegatives: number;
}

function signalStats(rows: readonly LabeledRow[]): SignalStat[] {
  const stats = new Map<string, SignalStat>();
  for (const r of rows) {
    for (const name of collectSignals(r.text).keys()) {
      const s = stats.get(name) ?? { signal: name, positives: 0, negatives: 0, hardNegatives: 0 };
      if (r.label === 1) {
        s.positives += 1;
      } else {
        s.negatives += 1;
      }
      if (r.hard_negative === true) {
        s.hardNegatives += 1;
      }
      stats.set(name, s);
    }
  }
  return [...stats.values()].sort((a, b) => b.positives - a.positives);
}

const pct = (x: number): string =>
  Number.isNaN(x) ? '   n/a' : `${(100 * x).toFixed(1)}%`.padStart(6);
const thr = (x: number): string => (Number.isFinite(x) ? x.toFixed(4) : String(x));

function printText(
  args: Args,
  q: QualityReport,
  lat: LatencyReport,
  sigs: SignalStat[] | undefined,
): void {
  const out: string[] = [];
  out.push(`file: ${args.path}${args.split === 'all' ? '' : ` (split: ${args.split})`}`);
  out.push(
    `rows: ${q.rows} (${q.positives} injection, ${q.negatives} benign), source weights: ${args.source}`,
  );
  out.push(`ROC AUC: ${q.auc.toFixed(4)}`);
  out.push(
    `TPR @ 1% FPR: ${pct(q.tprAt1pctFpr)}  (threshold ${thr(q.thresholdAt1pctFpr)}, achieved FPR ${pct(q.fprAt1pctThreshold)})`,
  );
  out.push(
    `TPR @ 5% FPR: ${pct(q.tprAt5pctFpr)}  (threshold ${thr(q.thresholdAt5pctFpr)}, achieved FPR ${pct(q.fprAt5pctThreshold)})`,
  );
  out.push(
    `default threshold ${q.defaultThreshold}: TPR ${pct(q.tprAtDefault)}, FPR ${pct(q.fprAtDefault)}`,
  );
  out.push(
    `hard negatives (${q.hardNegatives}): FPR ${pct(q.hardNegativeFprAtDefault)} at default threshold, ${pct(q.hardNegativeFprAt5pctThreshold)} at the 5%-FPR threshold`,
  );
  out.push('');
  out.push('slice                                   count  metric  @default  @5%FPR  mean score');
  for (const s of q.slices) {
    const metric = s.label === 1 ? 'TPR' : s.label === 0 ? 'FPR' : 'flag%';
    out.push(
      `${s.slice.padEnd(38)} ${String(s.count).padStart(6)}  ${metric.padEnd(6)}  ${pct(s.rateAtDefault)}    ${pct(s.rateAt5pctFpr)}   ${s.meanScore.toFixed(3)}`,
    );
  }
  out.push('');
  out.push(
    `latency: ${lat.msPerKbMedian.toFixed(4)} ms/KB median, ${lat.msPerKbP99.toFixed(4)} ms/KB p99, ${lat.msPerKbMax.toFixed(4)} ms/KB max (rows under 1 KB count as 1 KB)`,
  );
  out.push(
    `         ${lat.msPerRowMedian.toFixed(4)} ms/row median, ${lat.msPerRowP99.toFixed(4)} ms/row p99; throughput ${(lat.throughputKbPerSec / 1024).toFixed(2)} MB/s`,
  );
  if (sigs !== undefined) {
    out.push('');
    out.push('signal                    positives  negatives  hard negatives');
    for (const s of sigs) {
      out.push(
        `${s.signal.padEnd(24)} ${String(s.positives).padStart(10)} ${String(s.negatives).padStart(10)} ${String(s.hardNegatives).padStart(15)}`,
      );
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

function printErrors(
  rows: readonly LabeledRow[],
  scores: readonly number[],
  n: number,
  t: number,
): void {
  const fn = rows
    .map((r, i) => ({ r, s: scores[i] }))
    .filter((x) => x.r.label === 1 && x.s < t)
    .slice(0, n);
  const fp = rows
    .map((r, i) => ({ r, s: scores[i] }))
    .filter((x) => x.r.label === 0 && x.s >= t)
    .sort((a, b) => b.s - a.s)
    .slice(0, n);
  const show = (x: { r: LabeledRow; s: number }): string =>
    `  ${x.s.toFixed(3)} [${x.r.slice ?? ''}] ${[...collectSignals(x.r.text).keys()].join(',')} :: ${JSON.stringify(x.r.text.slice(0, 200))}`;
  process.stdout.write(`\nmissed injections (first ${n}):\n${fn.map(show).join('\n')}\n`);
  process.stdout.write(`\nfalse positives (top ${n}):\n${fp.map(show).join('\n')}\n`);
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(args.path)) {
    process.stderr.write(
      `eval-injection: labeled data not found at ${args.path}\n` +
        'Pass the path of a JSONL file with "text" and "label" fields, e.g.\n' +
        '  npx ts-node --transpile-only scripts/eval-injection.ts ../shared/data/prompt-injection/dev.jsonl\n',
    );
    process.exit(1);
  }
  let rows: LabeledRow[];
  try {
    rows = parseJsonl(readFileSync(args.path, 'utf8'));
  } catch (err) {
    process.stderr.write(`eval-injection: ${args.path}: ${(err as Error).message}\n`);
    process.exit(1);
  }
  if (args.split !== 'all') {
    rows = rows.filter((r, i) => {
      const inFit = splitBucket(r.id ?? `${i}:${r.text}`) < FIT_FRACTION;
      return args.split === 'fit' ? inFit : !inFit;
    });
  }
  if (rows.length === 0) {
    process.stderr.write(`eval-injection: ${args.path} has no rows\n`);
    process.exit(1);
  }
  const scores = rows.map((r) => detectInjection(r.text, { source: args.source }).score);
  const quality = qualityReport(rows, scores, DEFAULT_THRESHOLD);
  const latency = measureLatency(rows, args.source);
  const sigs = args.signals ? signalStats(rows) : undefined;
  if (args.json) {
    process.stdout.write(
      `${JSON.stringify({ file: args.path, split: args.split, source: args.source, quality, latency, signals: sigs }, null, 2)}\n`,
    );
  } else {
    printText(args, quality, latency, sigs);
    if (args.errors > 0) {
      printErrors(rows, scores, args.errors, DEFAULT_THRESHOLD);
    }
  }
}

main();
