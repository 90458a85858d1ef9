/**
 * Exports what a neural classifier would see of each training row, for the experiment in
 * scripts/injection/neural_experiment.py:
 *
 *   npx ts-node --transpile-only scripts/injection-export-windows.ts > /tmp/windows.jsonl
 *
 * One JSON line per row of ../shared/data/prompt-injection/{train,dev,train-extra}.jsonl: the
 * normalized text of its most suspicious 512-character window as the committed linear model
 * picks it (the window the gateway would hand a second model), the linear logit, label,
 * family, fit/held-out split, slice and language. Written outside the repository: it holds
 * the data's text.
 */
import { injectionModel, scoreText } from '../src/policy/protections/prompt-injection/detector';
import { loadRows } from './injection-training';

function main(): void {
  const model = injectionModel();
  for (const row of loadRows()) {
    const { logit, view } = scoreText(row.text, model);
    process.stdout.write(
      `${JSON.stringify({
        text: view,
        logit: Number(logit.toFixed(4)),
        label: row.label,
        family: row.family,
        holdout: row.holdout,
        slice: row.slice ?? null,
        lang: row.lang ?? null,
        hard: row.hard_negative === true,
      })}\n`,
    );
  }
}

main();
