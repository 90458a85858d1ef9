import OpenAI from 'openai';
import { writeCatalog } from './support/gateway';
import { admin, createKey, eventually, gatewayOnStore } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };

/** The local model, priced, with the cache on: every answer has a real cost. */
const catalog = writeCatalog(`
providers:
  - name: local
    kind: local
models:
  - { id: cached-local, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 100, output: 200 }, cache: { ttl_s: 60 } }
`);

/** Ledger, team scope, budgets and rate limits of cached answers, on each database. */
function ledgerSuite(env: () => Promise<StoreBackend>) {
  const store = gatewayOnStore(env, { CATALOG_PATH: catalog });
  let n = 0;

  const ask = (key: string, content: string) =>
    new OpenAI({ baseURL: store.gw.baseURL, apiKey: key, maxRetries: 0 }).chat.completions
      .create({ model: 'cached-local', messages: [SYSTEM, { role: 'user', content }] })
      .withResponse();

  const rowsOf = async (keyId: string, count: number): Promise<any[]> =>
    (
      await eventually(
        async () => {
          const res = await admin(store.gw, 'GET', `/usage/requests?key_id=${keyId}`);
          return res.body.data.length >= count ? (res.body.data as any[]) : undefined;
        },
        5000,
        `${count} ledger rows of ${keyId}`,
      )
    ).value;

  it('shares entries among the keys of one team only, and records hits at no cost with the cached mark', async () => {
    const x1 = await createKey(store.gw, { name: 'x-one', owner: 'cache-team-x' });
    const x2 = await createKey(store.gw, { name: 'x-two', owner: 'cache-team-x' });
    const y1 = await createKey(store.gw, { name: 'y-one', owner: 'cache-team-y' });
    const question = `Team question ${++n}`;
    const first = await ask(x1.key, question);
    expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
    const mate = await ask(x2.key, question);
    expect(mate.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(mate.data.choices[0].message).toEqual(first.data.choices[0].message);
    const stranger = await ask(y1.key, question);
    expect(stranger.response.headers.get('x-gateway-cache')).toBe('miss');

    const [missRow] = await rowsOf(x1.id, 1);
    const [hitRow] = await rowsOf(x2.id, 1);
    expect(missRow).toMatchObject({ cached: false, outcome: 'completed', team: 'cache-team-x' });
    expect(missRow.cost_usd).toBeGreaterThan(0);
    expect(missRow.input_tokens).toBeGreaterThan(0);
    expect(hitRow).toMatchObject({
      cached: true,
      outcome: 'completed',
      status: 200,
      model: 'cached-local',
      provider: null,
      cost_usd: 0,
      input_tokens: 0,
      output_tokens: 0,
    });
  });

  it('settles a budget reservation of a hit at $0, and counts the hit against the request rate', async () => {
    const key = await createKey(store.gw, {
      name: 'budgeted',
      budget: { amount_usd: 5, period: 'month' },
      limits: { requests_per_minute: 2 },
    });
    const question = `Budget question ${++n}`;
    await ask(key.key, question);
    const spentAfter = async (): Promise<number> => {
      const res = await fetch(`${store.gw.baseURL}/key`, {
        headers: { authorization: `Bearer ${key.key}` },
      });
      return ((await res.json()) as any).data.usage as number;
    };
    const { value: spent } = await eventually(
      async () => {
        const usage = await spentAfter();
        return usage > 0 ? usage : undefined;
      },
      5000,
      'the miss settled',
    );
    const hit = await ask(key.key, question);
    expect(hit.response.headers.get('x-gateway-cache')).toBe('hit');
    await rowsOf(key.id, 2);
    expect(await spentAfter()).toBe(spent);
    // Two requests in the minute: the third is refused, hit or not.
    await expect(ask(key.key, question)).rejects.toMatchObject({ status: 429 });
  });
}

describeOnEachStore('Response cache in the ledger', 'response_cache', ledgerSuite);
