/**
 * Run by test/rank-retention.e2e-spec.ts in a child `node --expose-gc`: loads both rank
 * tables through the token estimator (by default), through its `require` fallback
 * (`--fallback`), or as the estimator used to (`--require`: required, exports emptied,
 * dropped from the require cache), and prints how many bytes of V8's large-object space
 * the loading left behind after a full GC. The tables' own compact copies live in
 * ArrayBuffers, outside that space.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { ENCODINGS, requireRanks } from '../../src/limits/tokens/rank-source';
import { counterFor } from '../../src/limits/tokens/token-estimator';

const gc = (globalThis as { gc?: () => void }).gc as () => void;

function largeObjects(): number {
  gc();
  gc();
  return getHeapSpaceStatistics().find((s) => s.space_name === 'large_object_space')!
    .space_used_size;
}

const before = largeObjects();
if (process.argv.includes('--require')) {
  for (const encoding of ENCODINGS) {
    const path = require.resolve(`js-tiktoken/ranks/${encoding}`);
    /* eslint-disable @typescript-eslint/no-require-imports */
    require(path);
    require.cache[path]!.exports = {};
    delete require.cache[path];
    /* eslint-enable @typescript-eslint/no-require-imports */
  }
} else if (process.argv.includes('--fallback')) {
  for (const encoding of ENCODINGS) {
    requireRanks(require.resolve(`js-tiktoken/ranks/${encoding}`));
  }
} else {
  counterFor('o200k_base').count('hello');
  counterFor('cl100k_base').count('hello');
}
process.stdout.write(JSON.stringify({ retainedBytes: largeObjects() - before }));
