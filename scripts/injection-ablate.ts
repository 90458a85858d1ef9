/**
 * Which data and augmentations move the leave-one-source-out number:
 *
 *   npx ts-node --transpile-only scripts/injection-ablate.ts [name ...] [--only fam,...] [--set k=v,...] [--json]
 *
 * Runs the full leave-one-source-out protocol of eval:injection (linear model) for each named
 * configuration (all of them without names) and prints the pooled headline (TPR at 1% FPR on
 * unseen benign sources), the hard negatives' FPR and the slices the issue tracks. Minutes
 * per configuration on two cores: run it with `nice`.
 */
import { losoSummary, type LosoSummary } from './injection-report';
import {
  DEFAULT_OPTIONS,
  featurize,
  leaveOneSourceOut,
  loadRows,
  type DataOptions,
  type TrainOptions,
} from './injection-training';

interface Config {
  data: DataOptions;
  options: Partial<TrainOptions>;
}

const NONE = { plant: 0, perturb: 0, mix: 0, templates: 0 };
const CONFIGS = new Map<string, Config>(
  Object.entries({
    base: { data: { extra: false, drop: [] }, options: NONE },
    extra: { data: { extra: true, drop: [] }, options: NONE },
    'extra-no-ml-override': { data: { extra: true, drop: ['ml_override_'] }, options: NONE },
    'extra+plant': { data: { extra: true, drop: [] }, options: { ...NONE, plant: 2000 } },
    'extra+plant+mix': {
      data: { extra: true, drop: [] },
      options: { ...NONE, plant: 2000, mix: 1000 },
    },
    'extra+plant+mix+perturb': {
      data: { extra: true, drop: [] },
      options: { plant: 2000, mix: 1000, perturb: 1000, templates: 0 },
    },
    'extra+plant+mix+perturb+templates': {
      data: { extra: true, drop: [] },
      options: { plant: 2000, mix: 1000, perturb: 1000, templates: 10000 },
    },
  } satisfies Record<string, Config>),
);

/** `lang` values that are not one non-English language. */
const NOT_A_LANGUAGE = new Set(['en', 'code', 'en/de', 'mixed', 'multi', '(none)']);

function line(name: string, l: LosoSummary): string {
  const pct = (x: number | undefined): string =>
    x === undefined || Number.isNaN(x) ? '     -' : `${(x * 100).toFixed(1)}%`.padStart(6);
  const slice = (k: string): number | undefined => l.pooled.bySlice.find((s) => s.key === k)?.tpr;
  const nonEnglish = l.pooled.byLanguage.filter(
    (g) => !NOT_A_LANGUAGE.has(g.key) && g.positives > 0,
  );
  const ne =
    nonEnglish.reduce((s, g) => s + g.tpr * g.positives, 0) /
    Math.max(
      1,
      nonEnglish.reduce((s, g) => s + g.positives, 0),
    );
  return [
    name.padEnd(26),
    pct(l.pooled.tprAt1pctFpr),
    pct(l.pooled.hardNegativeFpr),
    pct(ne),
    pct(slice('indirect_document')),
    pct(slice('indirect_tool_output')),
    pct(slice('jailbreak_roleplay')),
    pct(slice('direct_injection')),
    pct(l.averageTpr),
  ].join(' ');
}

function main(): void {
  const json = process.argv.includes('--json');
  // `--only fam1,fam2`: leave out only these families (a quicker, comparable subset).
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : undefined;
  // `--set key=value,...`: numeric training options over each configuration (a LOSO-calibrated
  // choice of regularisation or weighting, never one tuned on the dev rows).
  const setAt = process.argv.indexOf('--set');
  const overrides: Partial<TrainOptions> = {};
  for (const pair of setAt >= 0 ? (process.argv[setAt + 1] ?? '').split(',') : []) {
    const [key, value] = pair.split('=');
    if (!(key in DEFAULT_OPTIONS) || !Number.isFinite(Number(value))) {
      throw new Error(
        `--set ${pair}: expected a numeric option of ${Object.keys(DEFAULT_OPTIONS).join(', ')}`,
      );
    }
    Object.assign(overrides, { [key]: Number(value) });
  }
  const names = process.argv
    .slice(2)
    .filter(
      (a, i, all) => !a.startsWith('--') && all[i - 1] !== '--only' && all[i - 1] !== '--set',
    );
  const chosen = names.length > 0 ? names : [...CONFIGS.keys()];
  const header = [
    'config'.padEnd(26),
    ' LOSO ',
    ' hardN',
    ' non-en',
    '  doc ',
    '  tool',
    ' jailbr',
    ' direct',
    ' foldavg',
  ].join(' ');
  const results = new Map<string, LosoSummary>();
  for (const name of chosen) {
    const config = CONFIGS.get(name);
    if (config === undefined) {
      throw new Error(`unknown configuration ${name}; known: ${[...CONFIGS.keys()].join(', ')}`);
    }
    const started = Date.now();
    const options: TrainOptions = { ...DEFAULT_OPTIONS, ...config.options, ...overrides };
    const rows = loadRows(config.data);
    const loso = losoSummary(leaveOneSourceOut(featurize(rows, options), { ...options, only }));
    results.set(name, loso);
    process.stderr.write(`${name}: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    if (!json) {
      console.log(`${header}\n${line(name, loso)}`);
    }
  }
  if (json) {
    console.log(JSON.stringify(Object.fromEntries(results), null, 2));
  }
}

main();
