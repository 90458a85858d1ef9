import type { IncomingMessage, Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { named, textEvents } from './support/anthropic-fixtures';
import { textStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { type TestGateway, startGateway } from './support/gateway';
import { ADMIN_TOKEN, admin, createKey, eventually, pricedCatalog } from './support/key-store';
import { describeOnEachStore, type StoreBackend } from './support/postgres';

// A full collection on demand, so that a WeakRef tells whether anything still holds a body.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The parsed body of every request the gateway's server takes, weakly held. */
function watchBodies(server: Server): WeakRef<object>[] {
  const bodies: WeakRef<object>[] = [];
  server.prependListener('request', (req: IncomingMessage) => {
    let body: unknown;
    // body-parser assigns `{}` first, then the parsed body: keep a WeakRef to the last.
    Object.defineProperty(req, 'body', {
      configurable: true,
      get: () => body,
      set: (value: unknown) => {
        body = value;
        if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
          bodies.push(new WeakRef(value));
        }
      },
    });
  });
  return bodies;
}

async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 20 && ref.deref() !== undefined; i++) {
    // Let pending microtasks and timers drop their references, then collect.
    await sleep(10);
    gc();
  }
  return ref.deref() === undefined;
}

/**
 * A stream runs for minutes while an agent's request body is often hundreds of kilobytes:
 * once its upstream answer has started, the gateway keeps nothing of the body (issue 29),
 * yet the ledger row still names the model asked and prices a client that left.
 */
function bodyReleaseSuite(env: () => Promise<StoreBackend>) {
  const upstream = new FakeUpstream();
  let gw: TestGateway;
  let drop: () => Promise<void>;
  let bodies: WeakRef<object>[];
  let key: string;

  beforeAll(async () => {
    const store = await env();
    drop = store.drop;
    await upstream.start();
    gw = await startGateway({
      CATALOG_PATH: pricedCatalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      USAGE_FLUSH_INTERVAL_MS: '50',
      REDIS_URL: '',
      ...store.env,
    });
    bodies = watchBodies(gw.app.getHttpServer());
    ({ key } = await createKey(gw, { name: 'release' }));
  }, 90_000);
  afterAll(async () => {
    await gw?.close();
    await upstream.stop();
    await drop?.();
  });

  // A large prompt, as an agent sends: its text is what a stream must not keep.
  const prompt = 'Summarise this file.\n' + 'const answer = 42; // context\n'.repeat(4000);

  const cases = [
    {
      name: 'the OpenAI fast path',
      model: 'test-gpt',
      path: '/v1/chat/completions',
      events: textStream('upstream-gpt', ['Hel'], false).slice(0, 2),
    },
    {
      name: 'a translation to Anthropic Messages',
      model: 'test-claude',
      path: '/v1/messages',
      events: named(textEvents('upstream-claude', ['Hel']).slice(0, 4)),
    },
  ];

  it.each(cases)(
    'lets the body go once $name has started, and the ledger still prices the cut stream',
    async ({ model, path, events }) => {
      upstream.reset();
      upstream.on(path, () => ({ sse: events, after: 'hold' }));
      const before = bodies.length;
      const controller = new AbortController();
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model,
          stream: true,
          messages: [
            { role: 'system', content: 'You are a test double.' },
            { role: 'user', content: prompt },
          ],
        }),
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('Hel');
      expect(bodies.length).toBe(before + 1);
      expect(await collected(bodies[before])).toBe(true);

      controller.abort();
      const { value: row } = await eventually(
        async () => {
          const page = await admin(gw, 'GET', '/usage/requests');
          return (page.body.data as Record<string, unknown>[]).find(
            (r) => r.model === model && r.outcome === 'client_aborted',
          );
        },
        5000,
        'the ledger row of the cut stream',
      );
      expect(row).toMatchObject({ model_requested: model, stream: true, cost_estimated: true });
      // The estimate counts the prompt the body carried (4,000 lines of it).
      expect(row.input_tokens).toBeGreaterThan(20_000);
    },
  );
}

describeOnEachStore('a started stream and its request body', 'release', bodyReleaseSuite);
