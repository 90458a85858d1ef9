/**
 * Measures prompt_injection_protection through a running gateway, as a client sees it:
 *
 *   npx ts-node --transpile-only scripts/injection-gateway-eval.ts \
 *     --url http://127.0.0.1:3000 --key $GW_KEY [--model local-echo-gpt] [--detector local] \
 *     [--concurrency 4] [--limit N] [file.jsonl]
 *
 * Each row goes as one chat request with the protection tool in `flag` mode: a user turn, or
 * (slices of documents and tool outputs) a tool result after an assistant tool call. The
 * score is read from `x-gateway-protections` (two decimals, as a client reads it). Without a
 * file: the held-out 30% of ../shared/data/prompt-injection (rows the shipped model never
 * trained on). Reports AUC, TPR at 1% FPR, TPR/FPR at the default threshold, hard negatives,
 * per slice and per language, and the latency the client saw.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  parseJsonl,
  percentile,
  rateAtOrAbove,
  rocAuc,
  thresholdAtFpr,
  type LabeledRow,
} from '../src/policy/protections/prompt-injection/evaluation';
import { loadRows } from './injection-training';

interface Args {
  url: string;
  key: string;
  model: string;
  detector: string | undefined;
  concurrency: number;
  limit: number;
  path: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    url: 'http://127.0.0.1:3000',
    key: process.env.GW_KEY ?? '',
    model: 'local-echo-gpt',
    detector: undefined,
    concurrency: 4,
    limit: Infinity,
    path: undefined,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const next = (): string => argv[(i += 1)] ?? '';
    if (a === '--url') {
      args.url = next();
    } else if (a === '--key') {
      args.key = next();
    } else if (a === '--model') {
      args.model = next();
    } else if (a === '--detector') {
      args.detector = next();
    } else if (a === '--concurrency') {
      args.concurrency = Math.max(1, Number(next()) || 1);
    } else if (a === '--limit') {
      args.limit = Math.max(1, Number(next()) || 1);
    } else if (a.startsWith('--')) {
      throw new Error(`unknown option ${a}`);
    } else {
      args.path = resolve(process.cwd(), a);
    }
  }
  return args;
}

const INDIRECT = /document|tool_output/;

function body(row: LabeledRow, args: Args): unknown {
  const properties: Record<string, unknown> = { action: { const: 'flag' } };
  if (args.detector !== undefined) {
    properties.detector = { const: args.detector };
  }
  const messages: unknown[] = [{ role: 'system', content: 'You are a helpful assistant.' }];
  if (INDIRECT.test(row.slice ?? '')) {
    messages.push(
      { role: 'user', content: 'Please go through this and summarise it.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'fetch', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: row.text },
    );
  } else {
    messages.push({ role: 'user', content: row.text });
  }
  return {
    model: args.model,
    messages,
    max_tokens: 16,
    tools: [
      {
        type: 'function',
        function: {
          name: 'prompt_injection_protection',
          parameters: { type: 'object', properties },
        },
      },
    ],
  };
}

/** The score the header reports, and how long the request took. */
async function send(row: LabeledRow, args: Args): Promise<{ score: number; ms: number }> {
  const started = process.hrtime.bigint();
  const res = await fetch(`${args.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${args.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body(row, args)),
  });
  await res.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const header = res.headers.get('x-gateway-protections') ?? '';
  const m = /prompt_injection_protection=\w+;score=([\d.]+)/.exec(header);
  if (m === null) {
    throw new Error(`row ${row.id ?? '?'}: HTTP ${res.status}, header ${JSON.stringify(header)}`);
  }
  return { score: Number(m[1]), ms };
}

function group(
  rows: readonly LabeledRow[],
  scores: readonly number[],
  key: (r: LabeledRow) => string,
): void {
  const by = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const list = by.get(key(r)) ?? [];
    list.push(i);
    by.set(key(r), list);
  });
  for (const [k, idx] of [...by.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const pos = idx.filter((i) => rows[i].label === 1).map((i) => scores[i]);
    const neg = idx.filter((i) => rows[i].label === 0).map((i) => scores[i]);
    const pct = (x: number): string => (Number.isNaN(x) ? '    -' : `${(x * 100).toFixed(1)}%`);
    console.log(
      `    ${k.padEnd(38)} inj ${String(pos.length).padStart(5)} TPR@0.5 ${pct(rateAtOrAbove(pos, 0.5)).padStart(6)}   benign ${String(neg.length).padStart(5)} FPR@0.5 ${pct(rateAtOrAbove(neg, 0.5)).padStart(6)}`,
    );
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const all: LabeledRow[] =
    args.path !== undefined
      ? parseJsonl(readFileSync(args.path, 'utf8'))
      : loadRows().filter((r) => r.holdout);
  // --limit samples evenly across the file (its rows are grouped by source).
  const step = Math.max(1, Math.ceil(all.length / args.limit));
  const rows = all.filter((_, i) => i % step === 0);
  const scores = new Array<number>(rows.length);
  const latency: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const i = next;
      next += 1;
      const { score, ms } = await send(rows[i], args);
      scores[i] = score;
      latency.push(ms);
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, worker));

  const labels = rows.map((r) => r.label);
  const pos = scores.filter((_, i) => labels[i] === 1);
  const neg = scores.filter((_, i) => labels[i] === 0);
  const hard = scores.filter((_, i) => rows[i].hard_negative === true);
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  console.log(`${rows.length} rows through ${args.url} (${args.model})`);
  console.log(
    `AUC ${rocAuc(scores, labels).toFixed(3)}  TPR@1%FPR ${pct(rateAtOrAbove(pos, thresholdAtFpr(neg, 0.01)))}  default: TPR ${pct(rateAtOrAbove(pos, 0.5))} FPR ${pct(rateAtOrAbove(neg, 0.5))}  hard-neg FPR ${pct(rateAtOrAbove(hard, 0.5))} (${hard.length})`,
  );
  console.log('  per slice:');
  group(rows, scores, (r) => r.slice ?? '(none)');
  console.log('  per language:');
  group(rows, scores, (r) => r.lang ?? '(none)');
  console.log(
    `client latency ms: p50 ${percentile(latency, 0.5).toFixed(1)} p99 ${percentile(latency, 0.99).toFixed(1)}`,
  );
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
});
