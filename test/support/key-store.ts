import { startGateway, writeCatalog } from './gateway';
import type { TestGateway } from './gateway';
import type { StoreBackend } from './postgres';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** A catalog with priced fake OpenAI and Anthropic upstreams and the local models. */
export function pricedCatalog(upstreamUrl: string): string {
  return writeCatalog(`
providers:
  - name: fake-openai
    kind: openai
    base_url: ${upstreamUrl}/v1
    api_key_env: TEST_UPSTREAM_KEY
  - name: fake-anthropic
    kind: anthropic
    base_url: ${upstreamUrl}
    api_key_env: TEST_UPSTREAM_KEY
  - name: local
    kind: local
models:
  - { id: test-gpt, upstream_id: upstream-gpt, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1.25, output: 10, cached_input: 0.125 } }
  - { id: test-claude, upstream_id: upstream-claude, provider: fake-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } }
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

/** The fake OpenAI answer: 1200 input (200 cached), 300 output (100 reasoning). */
export const CHAT_USAGE = {
  prompt_tokens: 1200,
  completion_tokens: 300,
  total_tokens: 1500,
  prompt_tokens_details: { cached_tokens: 200 },
  completion_tokens_details: { reasoning_tokens: 100 },
};
/** (1000 x 1.25 + 200 x 0.125 + 300 x 10) / 1e6 USD. */
export const CHAT_COST_USD = 0.004275;

/** The fake Anthropic answer: 500 fresh, 2000 cache reads, 1000 cache writes, 40 output. */
export const MESSAGE_USAGE = {
  input_tokens: 500,
  cache_read_input_tokens: 2000,
  cache_creation_input_tokens: 1000,
  output_tokens: 40,
};
/** (500 x 3 + 2000 x 0.3 + 1000 x 3.75 + 40 x 15) / 1e6 USD. */
export const MESSAGE_COST_USD = 0.00645;

export interface AdminAnswer {
  status: number;
  body: any;
}

/** Calls the admin API of `gw` with the admin token. */
export async function admin(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
  token = ADMIN_TOKEN,
): Promise<AdminAnswer> {
  const res = await fetch(`${gw.origin}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Creates a key and returns its id and secret (failing the test on anything but 201). */
export async function createKey(
  gw: TestGateway,
  body: Record<string, unknown>,
): Promise<{ id: string; key: string; view: any }> {
  const res = await admin(gw, 'POST', '/keys', body);
  if (res.status !== 201) {
    throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { id: res.body.id, key: res.body.key, view: res.body };
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<{ value: T; afterMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) {
      return { value, afterMs: Date.now() - started };
    }
    if (Date.now() - started > ms) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A gateway on one key store for a suite: started in beforeAll on `backend` with a priced
 * catalog, the admin token and a 50 ms ledger flush (plus `env`), closed with its store
 * in afterAll. Read `.gw` inside tests.
 */
export function gatewayOnStore(
  backend: () => Promise<StoreBackend>,
  env: Record<string, string> = {},
): { gw: TestGateway } {
  const suite = {} as { gw: TestGateway };
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const store = await backend();
    drop = store.drop;
    suite.gw = await startGateway({
      CATALOG_PATH: pricedCatalog('http://127.0.0.1:9'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...env,
      ...store.env,
    });
  }, 90_000);
  afterAll(async () => {
    await suite.gw?.close();
    await drop?.();
  });
  return suite;
}
