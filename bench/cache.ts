/**
 * What the response cache costs a request of a model that opts in, in process: the key
 * (canonical JSON + SHA-256 of the whole body) for bodies of three sizes, and a lookup and a
 * store of an in-memory entry (the entry's JSON: a stored chat answer of ~1 KB). A model
 * that does not opt in pays one property read and nothing else.
 *
 * `npx ts-node --transpile-only bench/cache.ts`; BENCH_SCALE scales the iteration counts.
 */
import { createHash } from 'node:crypto';
import { cacheKey } from '../src/cache/cache-key';
import { MemoryCacheStore } from '../src/cache/cache-store';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);

function body(messages: number): Record<string, unknown> {
  return {
    model: 'gpt-5-mini',
    temperature: 0.2,
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    messages: [
      { role: 'system', content: 'You are a support assistant for the billing team.' },
      ...Array.from({ length: messages }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `Message ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}`,
      })),
    ],
  };
}

function time(label: string, iterations: number, run: (i: number) => void): void {
  for (let i = 0; i < Math.min(iterations, 1000); i++) {
    run(i);
  }
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    run(i);
  }
  const perOp = Number(process.hrtime.bigint() - started) / iterations / 1000;
  console.log(`${label.padEnd(34)} ${perOp.toFixed(2).padStart(9)} µs/op`);
}

for (const [label, messages, n] of [
  ['key, 1 KB body', 3, 50_000],
  ['key, 20 KB body', 90, 5_000],
  ['key, 200 KB body', 900, 500],
] as const) {
  const b = body(messages);
  const size = JSON.stringify(b).length;
  time(`${label} (${(size / 1024).toFixed(0)} KB)`, Math.ceil(n * SCALE), () =>
    cacheKey({
      format: 'chat_completions',
      model: 'gpt-5-mini',
      candidates: ['gpt-5-mini'],
      body: b,
      protections: [],
      scope: 'team:billing',
      headers: {},
    }),
  );
  // For scale: what any hash of the body costs at least (no key order, nothing else).
  time(`  plain stringify + sha256`, Math.ceil(n * SCALE), () =>
    createHash('sha256').update(JSON.stringify(b)).digest('hex'),
  );
}

const store = new MemoryCacheStore(64 * 1024 * 1024, 10_000);
const entry = JSON.stringify({
  v: 1,
  model: 'gpt-5-mini',
  response: {
    id: 'chatcmpl-1',
    model: 'gpt-5-mini-2025',
    created: 1,
    content: [{ type: 'text', text: 'x'.repeat(900) }],
    finishReason: 'stop',
    usage: { inputTokens: 100, outputTokens: 200 },
  },
});
time('memory store set (1 KB entry)', Math.ceil(200_000 * SCALE), (i) =>
  store.set(`k${i % 5000}`, entry, 60_000),
);
time('memory store get + parse (hit)', Math.ceil(200_000 * SCALE), (i) =>
  JSON.parse(store.get(`k${i % 5000}`) ?? '{}'),
);
