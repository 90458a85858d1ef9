/**
 * What the gateway's own Responses store costs a request (`npm run bench:responses-store`):
 * reading a 20-turn `previous_response_id` chain (the owner lookup, the chain's one
 * recursive query, parsing and rebuilding the conversation, as admission does it) and
 * writing the new response (its row and its owner records, as the answer waits for them),
 * timed per request, on PGlite in memory and on PostgreSQL (DATABASE_URL's server, else
 * 127.0.0.1:5432, in a scratch database; skipped when none answers). A request with
 * `store: false` and no continuation does none of this: nothing to time.
 *
 * BENCH_SCALE (0.01..1) shortens it; BENCH_DB=pglite or postgres runs one database only.
 */
import type { ConfigService } from '@nestjs/config';
import { type Kysely, sql } from 'kysely';
import { Client } from 'pg';
import type { ApiKeyInfo } from '../src/common/key-policy';
import type { CatalogService } from '../src/catalog/catalog.service';
import type { GatewayRequest } from '../src/common/request-context';
import type { AllConfig } from '../src/config';
import { type OpenDatabase, openDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrations';
import type { GenerationRoute } from '../src/formats/shared/canonical-path';
import type { ResponsesRequestDto } from '../src/formats/responses/responses-request.dto';
import { ResponsesOwnership } from '../src/formats/responses/responses.ownership';
import { type ResponseObject, newResponsesId } from '../src/formats/responses/responses.wire';
import { ResponseRecorder } from '../src/formats/responses/store/response-recorder';
import { KyselyResponseStore } from '../src/formats/responses/store/response-store';
import { ResponsesConversations } from '../src/formats/responses/store/responses-conversations';
import { ObjectOwnership } from '../src/ownership/object-ownership.service';
import { KyselyOwnerStore } from '../src/ownership/owner-store';

const SCALE = Math.min(1, Math.max(0.01, Number(process.env.BENCH_SCALE ?? 1) || 1));
const TURNS = 20;
const N = Math.max(50, Math.round(1_000 * SCALE));
const WARMUP = Math.max(10, Math.round(100 * SCALE));

const KEY: ApiKeyInfo = { id: 'key_bench', team: 'bench', limits: {}, modelLimits: new Map() };

const config = {
  get: () => ({
    responses: {
      maxBytes: 4_194_304,
      retentionDays: 30,
      chainMaxDepth: 1_000,
      chainMaxBytes: 33_554_432,
      sweepIntervalMs: 3_600_000,
    },
  }),
} as unknown as ConfigService<AllConfig, true>;
const catalog = {
  find: () => ({ provider: { name: 'local' } }),
} as unknown as CatalogService;
const route = { path: { kind: 'canonical' } } as unknown as GenerationRoute;
const req = { ctx: { key: KEY } } as unknown as GatewayRequest;

/** One turn's answer: reasoning with a payload, a text of a few sentences, a tool call. */
function answer(id: string, turn: number): ResponseObject {
  const text = `Turn ${turn}: ${'The weather in Paris is mild, with a light breeze from the west. '.repeat(6)}`;
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    background: false,
    completed_at: Math.floor(Date.now() / 1000),
    error: null,
    incomplete_details: null,
    instructions: 'You are a helpful assistant.',
    max_output_tokens: null,
    model: 'local-echo-gpt',
    output: [
      {
        id: newResponsesId('rs_'),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'The user asks about the weather; check it.' }],
        encrypted_content: `gwant1.sig.${'EqQBCkYIBxgCKkBp0L3Signed'.repeat(12)}`,
      },
      {
        id: newResponsesId('msg_'),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
      },
      {
        id: newResponsesId('fc_'),
        type: 'function_call',
        status: 'completed',
        call_id: `call_${turn}`,
        name: 'get_weather',
        arguments: '{"city":"Paris","unit":"celsius"}',
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: 'low', summary: 'auto' },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: 900,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 60 },
      total_tokens: 1200,
    },
    metadata: {},
  };
}

function body(previous: string | null, turn: number): ResponsesRequestDto {
  return {
    model: 'local-echo-gpt',
    instructions: 'You are a helpful assistant.',
    ...(previous ? { previous_response_id: previous } : {}),
    input: [
      { type: 'function_call_output', call_id: `call_${turn - 1}`, output: '18C, light wind' },
      { role: 'user', content: `And for turn ${turn}, what should I wear outside today?` },
    ],
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function scratchPostgres(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const base = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `gw_bench_responses_${process.pid}`;
  const run = async (sql: string): Promise<void> => {
    const c = new Client({ connectionString: base, connectionTimeoutMillis: 1_000 });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  try {
    await run(`CREATE DATABASE ${name}`);
  } catch {
    return undefined;
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function measure(label: string, database: OpenDatabase): Promise<void> {
  await migrateToLatest(database.db as unknown as Kysely<unknown>);
  const owners = new ObjectOwnership(new KyselyOwnerStore(database.db));
  const store = new KyselyResponseStore(database.db);
  const conversations = new ResponsesConversations(new ResponsesOwnership(owners), store, config);
  const recorder = new ResponseRecorder(store, catalog, config);

  // A 20-turn conversation, each turn written as the gateway writes it.
  let head: string | null = null;
  for (let turn = 1; turn <= TURNS; turn++) {
    const request = await conversations.resolve(body(head, turn), KEY, route);
    const id = newResponsesId('resp_');
    await recorder.write(answer(id, turn), request, req);
    head = id;
  }
  const read: number[] = [];
  const write: number[] = [];
  const both: number[] = [];
  let items = 0;
  let cpu = { user: 0, system: 0 };
  for (let i = 0; i < WARMUP + N; i++) {
    if (i === WARMUP) {
      cpu = process.cpuUsage();
    }
    const t0 = process.hrtime.bigint();
    const request = await conversations.resolve(body(head, TURNS + 1), KEY, route);
    const t1 = process.hrtime.bigint();
    // Each new response continues the same head: the chain read stays 20 turns long.
    await recorder.write(answer(newResponsesId('resp_'), TURNS + 1), request, req);
    const t2 = process.hrtime.bigint();
    if (i >= WARMUP) {
      read.push(Number(t1 - t0) / 1e6);
      write.push(Number(t2 - t1) / 1e6);
      both.push(Number(t2 - t0) / 1e6);
      items = (request.input as unknown[]).length;
    }
  }
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / N;
  const row = (name: string, values: number[]): string => {
    const s = [...values].sort((a, b) => a - b);
    return `| ${label} | ${name} | ${percentile(s, 50).toFixed(3)} | ${percentile(s, 90).toFixed(3)} | ${percentile(s, 99).toFixed(3)} |`;
  };
  console.log(row(`read ${TURNS}-turn chain (${items} items)`, read));
  console.log(row('write one response', write));
  console.log(row('read + write (target < 2 ms at p50)', both));
  // The database's own time for the chain's one query (planning and execution), apart from
  // the round trip and this process: what a loaded machine inflates least.
  const explained: number[] = [];
  for (let i = 0; i < 50; i++) {
    const { rows } = await sql<{
      'QUERY PLAN': [{ 'Planning Time': number; 'Execution Time': number }];
    }>`
      EXPLAIN (ANALYZE, FORMAT JSON)
      WITH RECURSIVE chain AS (
        SELECT id, previous_id, input_items, response, 1 AS depth, bytes::bigint AS total
        FROM stored_responses WHERE id = ${head} AND expires_at > now()
        UNION ALL
        SELECT s.id, s.previous_id, s.input_items, s.response, c.depth + 1, c.total + s.bytes
        FROM stored_responses s JOIN chain c ON s.id = c.previous_id
        WHERE c.depth <= 1000 AND s.expires_at > now()
      )
      SELECT * FROM chain ORDER BY depth DESC`.execute(database.db);
    const plan = rows[0]['QUERY PLAN'][0];
    explained.push(plan['Planning Time'] + plan['Execution Time']);
  }
  console.log(row(`database time of the chain query (EXPLAIN ANALYZE)`, explained));
  console.log(
    `| ${label} | gateway CPU per read + write (${label.startsWith('PGlite') ? 'the database included' : 'PostgreSQL server excluded'}) | ${cpuMs.toFixed(3)} (mean) | | |`,
  );
}

async function main(): Promise<void> {
  console.log(`Responses store: ${N} requests after ${WARMUP} warm-up, ${TURNS}-turn chain`);
  console.log('');
  console.log('| database | step | p50 ms | p90 ms | p99 ms |');
  console.log('|---|---|---|---|---|');
  // BENCH_DB=pglite or postgres: one of them only.
  const only = process.env.BENCH_DB;
  if (only !== 'postgres') {
    const pglite = await openDatabase({ dataDir: 'memory://', poolSize: 1 });
    try {
      await measure('PGlite (memory)', pglite);
    } finally {
      await pglite.close();
    }
  }
  if (only === 'pglite') {
    return;
  }
  const scratch = await scratchPostgres();
  if (scratch === undefined) {
    console.log('| PostgreSQL | not reachable: skipped | | | |');
    return;
  }
  const pg = await openDatabase({ databaseUrl: scratch.url, dataDir: '', poolSize: 5 });
  try {
    await measure('PostgreSQL', pg);
  } finally {
    await pg.close();
    await scratch.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
