import { sql } from 'kysely';
import OpenAI from 'openai';
import { DATABASE } from '../../src/db/db.module';
import type { OpenDatabase } from '../../src/db/database';
import { chatCompletion } from './chat-fixtures';
import type { FakeUpstream } from './fake-upstream';
import type { TestGateway } from './gateway';

export const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };

/** Output tokens each budget test request asks for (and the fake upstream reports). */
export const MAX_TOKENS = 1000;
/** Input tokens the fake upstream reports: fewer than the short prompts' estimate. */
export const PROMPT_TOKENS = 10;
/** What one answer costs at test-gpt's prices (1.25 and 10 USD per million), in pico-USD. */
export const ANSWER_PICO = BigInt(PROMPT_TOKENS) * 1_250_000n + BigInt(MAX_TOKENS) * 10_000_000n;

function usageOf(body: any): object {
  const completion =
    typeof body?.max_completion_tokens === 'number' ? body.max_completion_tokens : body?.max_tokens;
  const output = typeof completion === 'number' ? completion : MAX_TOKENS;
  return {
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: output,
    total_tokens: PROMPT_TOKENS + output,
  };
}

/**
 * Chat completions that use every output token they may (the worst case a budget
 * reserves), JSON or streamed with the usage chunk, after `delayMs` so that requests overlap.
 */
export function answerWithFullOutput(upstream: FakeUpstream, delayMs = 30): void {
  upstream.on('/v1/chat/completions', (req) => {
    const usage = usageOf(req.body);
    if (req.body?.stream !== true) {
      return { json: chatCompletion('upstream-gpt', 'ok', { usage }), delayMs };
    }
    const base = {
      id: 'chatcmpl-b',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'upstream-gpt',
    };
    return {
      delayMs,
      sse: [
        {
          ...base,
          choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }],
        },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { ...base, choices: [], usage },
        '[DONE]',
      ],
    };
  });
}

/** One chat request of `key` at the budget tests' output cap; resolves to 'ok' or the error. */
export function chat(gw: TestGateway, key: string, stream = false): Promise<any> {
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });
  const body = {
    model: 'test-gpt',
    max_tokens: MAX_TOKENS,
    messages: [SYSTEM, { role: 'user' as const, content: 'Hi' }],
  };
  if (stream) {
    return client.chat.completions
      .create({ ...body, stream: true, stream_options: { include_usage: true } })
      .then(async (s) => {
        for await (const _ of s) {
          // drain
        }
        return 'ok' as const;
      })
      .catch((e: unknown) => e);
  }
  return client.chat.completions.create(body).then(
    () => 'ok' as const,
    (e: unknown) => e,
  );
}

/** The gateway's database (PGlite or PostgreSQL). */
export function databaseOf(gw: TestGateway): OpenDatabase {
  return gw.app.get<OpenDatabase>(DATABASE);
}

/** Spent and reserved pico-USD of every counter of one key or team, summed over periods. */
export async function counterOf(
  gw: TestGateway,
  scope: 'key' | 'team',
  id: string,
): Promise<{ spent: bigint; reserved: bigint; reservations: number }> {
  const { db } = databaseOf(gw);
  const c = await sql<{ spent: string | null; reserved: string | null }>`
    SELECT sum(spent_pusd)::text AS spent, sum(reserved_pusd)::text AS reserved
    FROM budget_counters WHERE scope = ${scope} AND scope_id = ${id}`.execute(db);
  const r = await sql<{ n: string | number }>`
    SELECT count(*) AS n FROM budget_reservations WHERE scope = ${scope} AND scope_id = ${id}`.execute(
    db,
  );
  return {
    spent: BigInt(c.rows[0]?.spent ?? 0),
    reserved: BigInt(c.rows[0]?.reserved ?? 0),
    reservations: Number(r.rows[0]?.n ?? 0),
  };
}

/** Sum of the ledger's cost for rows matching `where` (key_id or team), in pico-USD. */
export async function ledgerTotal(
  gw: TestGateway,
  column: 'key_id' | 'team',
  id: string,
): Promise<{ cost: bigint; rows: number }> {
  const { db } = databaseOf(gw);
  const res = await sql<{ cost: string | null; n: string | number }>`
    SELECT coalesce(sum(cost_pusd), 0)::text AS cost, count(*) AS n FROM usage_ledger
    WHERE ${sql.ref(column)} = ${id}`.execute(db);
  return { cost: BigInt(res.rows[0]?.cost ?? 0), rows: Number(res.rows[0]?.n ?? 0) };
}
