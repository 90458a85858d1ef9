import { admin, createKey, eventually, gatewayOnStore } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

const SYSTEM = { role: 'system', content: 'You are a test double.' };

/**
 * Text a client chose reaches the ledger (the model it asked for). A NUL character, which
 * PostgreSQL refuses in text and jsonb, or a megabyte of it must not make the batch fail:
 * a refused batch is retried forever and every later row waits behind it.
 */
function hostileTextSuite(env: () => Promise<StoreBackend>) {
  const store = gatewayOnStore(env);

  const post = (key: string, model: string): Promise<Response> =>
    fetch(`${store.gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [SYSTEM, { role: 'user', content: 'Hi' }] }),
    });

  it('records requests whose model name holds a NUL, a lone surrogate or a megabyte, and the rows after them', async () => {
    const { key } = await createKey(store.gw, { name: 'hostile-text' });
    expect((await post(key, 'no\u0000such-model')).status).toBe(404);
    expect((await post(key, 'lone\ud800surrogate')).status).toBe(404);
    expect((await post(key, 'literal\\u0000text')).status).toBe(404);
    expect((await post(key, `x${'y'.repeat(1_000_000)}`)).status).toBe(404);
    expect((await post(key, 'local-echo-gpt')).status).toBe(200);
    const { value: rows } = await eventually(
      async () => {
        const res = await admin(store.gw, 'GET', '/usage/requests');
        return res.body.data.length >= 5 ? (res.body.data as any[]) : undefined;
      },
      5000,
      'five ledger rows',
    );
    const asked = rows.map((r) => r.model_requested as string);
    expect(asked).toContain('local-echo-gpt');
    expect(asked).toContain('no\uFFFDsuch-model');
    expect(asked).toContain('lone\uFFFDsurrogate');
    // A backslash and "u0000" typed as text is text, kept as it is.
    expect(asked).toContain('literal\\u0000text');
    expect(Math.max(...asked.map((m) => m.length))).toBe(256);
  });
}

describeOnEachStore('ledger text from clients', 'hostile', hostileTextSuite);
