/**
 * Exports leave-one-source-out folds for the neural ensemble experiment
 * (scripts/injection/neural_experiment.py --folds-file):
 *
 *   npx ts-node --transpile-only scripts/injection-export-folds.ts xsafety,deepset > /tmp/folds.jsonl
 *
 * For each named family, the linear model is trained exactly as in a LOSO fold (fit split of
 * the other families and the augmentations built from them, coupled families out) and every
 * row it concerns is written with the fold's view of it: `fit` rows (what a second model may
 * train on, augmented rows included), `pool` rows (the other families' held-out benign rows
 * that set the fold's 1%-FPR threshold) and `test` rows (the left-out family), each with the
 * fold model's logit and the normalized text of its best window. Written outside the
 * repository: it holds the data's text.
 */
import type { InjectionModel } from '../src/policy/protections/prompt-injection/model/model-file';
import { scoreText } from '../src/policy/protections/prompt-injection/detector';
import { own } from '../src/common/own';
import {
  augment,
  COUPLED_FAMILIES,
  DEFAULT_OPTIONS,
  featurize,
  loadRows,
  train,
  type Example,
} from './injection-training';

function main(): void {
  const families = (process.argv[2] ?? '').split(',').filter((f) => f !== '');
  if (families.length === 0) {
    throw new Error('usage: injection-export-folds.ts fam1,fam2 > folds.jsonl');
  }
  const o = DEFAULT_OPTIONS;
  const examples = featurize(loadRows(), o);
  for (const family of families) {
    const out = new Set([family, ...(own(COUPLED_FAMILIES, family) ?? [])]);
    const fit = examples.filter((e) => !out.has(e.row.family) && !e.row.holdout);
    const float = train(fit, o);
    // The float model scores like the shipped one (scale 1, no calibration needed here).
    const model: InjectionModel = { ...float, calibration: { slope: 1, threshold: 0 }, bytes: 0 };
    const write = (e: Example, role: string): void => {
      const { logit, view } = scoreText(e.row.text, model);
      process.stdout.write(
        `${JSON.stringify({
          fold: family,
          role,
          text: view,
          logit: Number(logit.toFixed(4)),
          label: e.row.label,
          family: e.row.family,
          lang: e.row.lang ?? null,
          slice: e.row.slice ?? null,
          hard: e.row.hard_negative === true,
        })}\n`,
      );
    };
    for (const e of [...fit, ...augment(fit, o)]) {
      write(e, 'fit');
    }
    for (const e of examples) {
      if (e.row.family === family) {
        write(e, 'test');
      } else if (!out.has(e.row.family) && e.row.holdout && e.row.label === 0) {
        write(e, 'pool');
      }
    }
    process.stderr.write(`fold ${family} exported\n`);
  }
}

main();
