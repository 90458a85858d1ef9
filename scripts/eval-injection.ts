/**
 * Measures the prompt-injection classifier (the committed weights, as the gateway runs them):
 *
 *   npm run eval:injection -- [path.jsonl] [--no-loso] [--json] [--errors N]
 *
 * Headline first: leave-one-source-out (a linear model retrained without each source family
 * of ../shared/data/prompt-injection/{train,dev,train-extra}.jsonl and tested on it, all
 * folds pooled, TPR at 1% FPR on benign rows of unseen sources; per family, slice and
 * language; several minutes, `--no-loso` skips it). Then the shipped model on the held-out
 * 30% (it never trained on it) or, with a path, on every row of that file, per slice and on
 * hard negatives, at the default threshold and at 1% FPR; then latency.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  detectInjection,
  injectionModel,
  scoreText,
  warmUpDetector,
} from '../src/policy/protections/prompt-injection/detector';
import {
  parseJsonl,
  percentile,
  type LabeledRow,
} from '../src/policy/protections/prompt-injection/evaluation';
import {
  holdoutReport,
  losoSummary,
  type GroupRate,
  type HoldoutReport,
  type LosoSummary,
} from './injection-report';
import {
  DEFAULT_OPTIONS,
  familyOf,
  featurize,
  leaveOneSourceOut,
  loadRows,
  type Example,
  type Row,
  type TrainOptions,
} from './injection-training';

interface Args {
  path: string | undefined;
  loso: boolean;
  json: boolean;
  errors: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { path: undefined, loso: true, json: false, errors: 0 };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--no-loso') {
      args.loso = false;
    } else if (a === '--json') {
      args.json = true;
    } else if (a === '--errors') {
      args.errors = Number.parseInt(argv[(i += 1)] ?? '', 10) || 0;
    } else if (a.startsWith('--')) {
      process.stderr.write(
        `unknown option ${a}\nusage: eval-injection [path] [--no-loso] [--json] [--errors N]\n`,
      );
      process.exit(2);
    } else {
      args.path = resolve(process.cwd(), a);
    }
  }
  return args;
}

interface LatencyReport {
  /** Milliseconds per KB; rows under 1 KB count as 1 KB. */
  msPerKbMedian: number;
  msPerKbP99: number;
  msPerKbMax: number;
  msPerRowMedian: number;
  msPerRowMax: number;
}

function measureLatency(rows: readonly LabeledRow[]): LatencyReport {
  warmUpDetector();
  for (const r of rows.slice(0, 500)) {
    detectInjection(r.text);
  }
  const perKb: number[] = [];
  const perRow: number[] = [];
  for (const r of rows) {
    const kb = Buffer.byteLength(r.text, 'utf8') / 1024;
    const start = process.hrtime.bigint();
    detectInjection(r.text);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    perRow.push(ms);
    perKb.push(ms / Math.max(1, kb));
  }
  const r4 = (x: number): number => Number(x.toFixed(4));
  return {
    msPerKbMedian: r4(percentile(perKb, 0.5)),
    msPerKbP99: r4(percentile(perKb, 0.99)),
    msPerKbMax: r4(percentile(perKb, 1)),
    msPerRowMedian: r4(percentile(perRow, 0.5)),
    msPerRowMax: r4(percentile(perRow, 1)),
  };
}

/** A row as an Example for the report helpers (views are not needed: logits are given). */
function asExample(row: Row): Example {
  return { row, views: [], obfuscation: undefined };
}

function printHoldout(name: string, r: HoldoutReport): void {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  console.log(
    `${name.padEnd(14)} rows ${String(r.rows).padStart(5)}  AUC ${r.auc.toFixed(3)}  TPR@1%FPR ${pct(r.tprAt1pctFpr)}  ` +
      `default: TPR ${pct(r.tprAtDefault)} FPR ${pct(r.fprAtDefault)}  hard-neg FPR ${pct(r.hardNegativeFprAtDefault)} (${r.hardNegatives})`,
  );
  for (const s of r.slices) {
    console.log(`    ${s.slice.padEnd(40)} ${String(s.rows).padStart(5)}  ${pct(s.rate)}`);
  }
}

function printGroups(title: string, groups: readonly GroupRate[]): void {
  const pct = (x: number): string =>
    Number.isNaN(x) ? '     -' : `${(x * 100).toFixed(1)}%`.padStart(6);
  console.log(`  ${title}:`);
  for (const g of groups) {
    console.log(
      `    ${g.key.padEnd(38)} inj ${String(g.positives).padStart(5)} TPR ${pct(g.tpr)}   benign ${String(g.negatives).padStart(5)} FPR ${pct(g.fpr)}`,
    );
  }
}

function printLoso(l: LosoSummary): void {
  const pct = (x: number | null): string =>
    x === null || Number.isNaN(x) ? '    -' : `${(x * 100).toFixed(1)}%`.padStart(6);
  const p = l.pooled;
  console.log(
    `\nHEADLINE leave-one-source-out TPR at 1% FPR on unseen benign sources: ${pct(p.tprAt1pctFpr)}` +
      `  (AUC ${p.auc.toFixed(3)}, ${p.positives} injections, ${p.negatives} benign, hard-neg FPR ${pct(p.hardNegativeFpr)}, threshold shift ${p.shift.toFixed(2)})`,
  );
  printGroups('per family (pooled threshold)', p.byFamily);
  printGroups('per slice (pooled threshold)', p.bySlice);
  printGroups('per language (pooled threshold)', p.byLanguage);
  console.log("\nper fold (threshold: 1% FPR on the other sources' held-out benign rows)");
  for (const f of l.families) {
    console.log(
      `  ${f.family.padEnd(26)} inj ${String(f.positives).padStart(5)} TPR ${pct(f.tpr)}   benign ${String(f.negatives).padStart(5)} FPR ${pct(f.fpr)}`,
    );
  }
  console.log(
    `  average TPR ${pct(l.averageTpr)}   average FPR ${pct(l.averageFpr)}   hard-neg FPR ${pct(l.hardNegativeFpr)}`,
  );
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const model = injectionModel();
  let rows: Row[];
  if (args.path !== undefined) {
    if (!existsSync(args.path)) {
      throw new Error(`${args.path} not found`);
    }
    rows = parseJsonl(readFileSync(args.path, 'utf8')).map((r) => ({
      ...r,
      file: args.path ?? '',
      family: familyOf(r.source ?? ''),
      holdout: true,
    }));
  } else {
    rows = loadRows().filter((r) => r.holdout);
  }
  const logits = rows.map((r) => scoreText(r.text, model).logit);
  const report = (keep: (r: Row) => boolean): HoldoutReport => {
    const idx = rows.map((r, i) => i).filter((i) => keep(rows[i]));
    return holdoutReport(
      idx.map((i) => asExample(rows[i])),
      idx.map((i) => logits[i]),
      model,
    );
  };
  const holdout: Record<string, HoldoutReport> =
    args.path !== undefined
      ? { file: report(() => true) }
      : {
          dev: report((r) => r.file === 'dev.jsonl'),
          train: report((r) => r.file === 'train.jsonl'),
          extra: report((r) => r.file === 'train-extra.jsonl'),
          all: report(() => true),
        };

  let loso: LosoSummary | undefined;
  if (args.loso) {
    const options: TrainOptions = {
      ...DEFAULT_OPTIONS,
      bits: model.bits,
      window: model.window,
      stride: model.stride,
    };
    const all = loadRows();
    loso = losoSummary(leaveOneSourceOut(featurize(all, options), options));
  }
  const latency = measureLatency(rows);
  const memory = { weightsBytes: model.bytes };

  if (args.json) {
    console.log(JSON.stringify({ holdout, loso, latency, memory }, null, 2));
    return;
  }
  if (loso !== undefined) {
    printLoso(loso);
  }
  console.log(
    `\nshipped model on ${args.path ?? 'the held-out split (train, dev, train-extra: 30% by id hash)'}; default threshold = score 0.5 (1% FPR on unseen benign sources)`,
  );
  for (const [name, r] of Object.entries(holdout)) {
    printHoldout(name, r);
  }
  console.log(`\nlatency: ${JSON.stringify(latency)}`);
  console.log(`weights: ${(memory.weightsBytes / 1024 / 1024).toFixed(2)} MB in memory`);
  if (args.errors > 0) {
    const t = model.calibration.threshold;
    const wrong = rows
      .map((r, i) => ({ r, z: logits[i] }))
      .filter(({ r, z }) => (r.label === 1) !== z >= t)
      .sort((a, b) => Math.abs(b.z - t) - Math.abs(a.z - t))
      .slice(0, args.errors);
    for (const { r, z } of wrong) {
      console.log(
        `${r.label === 1 ? 'MISS' : 'FP  '} ${(z - t).toFixed(2)} ${r.id ?? ''} ${r.text.slice(0, 100).replace(/\s+/g, ' ')}`,
      );
    }
  }
}

main();
