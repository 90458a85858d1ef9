/**
 * Fits the direct (user-turn) signal weights of the prompt-injection detector on the fit
 * part (70%) of a labeled JSONL file and reports the held-out (30%) quality, so the weight
 * table in src/policy/protections/prompt-injection/weights.ts can be updated by hand.
 *
 *   npx ts-node --transpile-only scripts/fit-injection-weights.ts [path] [--l2 0.01] [--fit-bias]
 *
 * The bias stays at weights.ts's BIAS (the score of a text with no signal) unless
 * --fit-bias: rows no signal can explain (mislabeled or off-topic positives) would otherwise
 * drag the no-evidence score up.
 * Logistic regression with an L2 penalty and non-negative weights (projected gradient
 * descent): a signal can only raise the score, which keeps scoring monotone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { collectSignals } from '../src/policy/protections/prompt-injection/detector';
import {
  parseJsonl,
  qualityReport,
  splitBucket,
  type LabeledRow,
} from '../src/policy/protections/prompt-injection/evaluation';
import { BIAS, WEIGHTS } from '../src/policy/protections/prompt-injection/weights';

const FIT_FRACTION = 0.7;
const ITERATIONS = 3000;
const LEARNING_RATE = 0.5;

const NAMES = Object.keys(WEIGHTS) as (keyof typeof WEIGHTS)[];

function features(row: LabeledRow): number[] {
  const fired = collectSignals(row.text);
  return NAMES.map((n) => (fired.has(n) ? 1 : 0));
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

function fit(
  x: number[][],
  y: number[],
  l2: number,
  fixedBias: number | undefined,
): { bias: number; w: number[] } {
  const d = NAMES.length;
  const w = new Array<number>(d).fill(0);
  let bias = fixedBias ?? 0;
  for (let it = 0; it < ITERATIONS; it += 1) {
    const gw = new Array<number>(d).fill(0);
    let gb = 0;
    for (let i = 0; i < x.length; i += 1) {
      let z = bias;
      for (let k = 0; k < d; k += 1) {
        z += w[k] * x[i][k];
      }
      const err = sigmoid(z) - y[i];
      gb += err;
      for (let k = 0; k < d; k += 1) {
        gw[k] += err * x[i][k];
      }
    }
    if (fixedBias === undefined) {
      bias -= (LEARNING_RATE * gb) / x.length;
    }
    for (let k = 0; k < d; k += 1) {
      w[k] = Math.max(0, w[k] - LEARNING_RATE * (gw[k] / x.length + l2 * w[k]));
    }
  }
  return { bias, w };
}

function scoreWith(x: number[][], bias: number, w: number[]): number[] {
  return x.map((row) => sigmoid(row.reduce((z, v, k) => z + v * w[k], bias)));
}

function summary(label: string, rows: LabeledRow[], scores: number[]): string {
  const q = qualityReport(rows, scores, 0.5);
  const p = (v: number): string => `${(100 * v).toFixed(1)}%`;
  return `${label}: n=${q.rows} AUC ${q.auc.toFixed(4)}, TPR@1%FPR ${p(q.tprAt1pctFpr)}, TPR@5%FPR ${p(q.tprAt5pctFpr)}, @0.5 TPR ${p(q.tprAtDefault)} FPR ${p(q.fprAtDefault)}, hard-neg FPR@0.5 ${p(q.hardNegativeFprAtDefault)}`;
}

function main(): void {
  const argv = process.argv.slice(2);
  let path = resolve(__dirname, '..', '..', 'shared', 'data', 'prompt-injection', 'dev.jsonl');
  let l2 = 0.01;
  let fixedBias: number | undefined = BIAS;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--l2') {
      l2 = Number(argv[i + 1]);
      i += 1;
    } else if (argv[i] === '--fit-bias') {
      fixedBias = undefined;
    } else {
      path = resolve(process.cwd(), argv[i]);
    }
  }
  if (!existsSync(path)) {
    process.stderr.write(`fit-injection-weights: labeled data not found at ${path}\n`);
    process.exit(1);
  }
  const rows = parseJsonl(readFileSync(path, 'utf8'));
  const fitRows: LabeledRow[] = [];
  const holdRows: LabeledRow[] = [];
  rows.forEach((r, i) => {
    (splitBucket(r.id ?? `${i}:${r.text}`) < FIT_FRACTION ? fitRows : holdRows).push(r);
  });
  const xFit = fitRows.map(features);
  const xHold = holdRows.map(features);
  const { bias, w } = fit(
    xFit,
    fitRows.map((r) => r.label),
    l2,
    fixedBias,
  );

  const current = NAMES.map((n) => WEIGHTS[n].direct);
  const out: string[] = [`fit rows ${fitRows.length}, holdout rows ${holdRows.length}, l2 ${l2}`];
  out.push(`bias: fitted ${bias.toFixed(2)} (current ${BIAS})`);
  out.push('signal                    fitted  current  fires(fit)');
  NAMES.forEach((n, k) => {
    const fires = xFit.filter((row) => row[k] === 1).length;
    out.push(
      `${n.padEnd(24)} ${w[k].toFixed(2).padStart(7)} ${current[k].toFixed(2).padStart(8)} ${String(fires).padStart(10)}`,
    );
  });
  out.push(summary('fitted weights, fit split', fitRows, scoreWith(xFit, bias, w)));
  out.push(summary('fitted weights, holdout  ', holdRows, scoreWith(xHold, bias, w)));
  out.push(summary('current weights, holdout ', holdRows, scoreWith(xHold, BIAS, current)));
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
