import OpenAI from 'openai';
import { FakeUpstream, type Reply } from './support/fake-upstream';
import {
  adminKeysFile,
  startGateway,
  TEST_KEY,
  writeCatalog,
  type TestGateway,
} from './support/gateway';
import { ADMIN_TOKEN, admin, createKey, eventually } from './support/key-store';
import {
  createTestDatabase,
  describeOnEachStore,
  describeWithPostgres,
  query,
  type StoreBackend,
  type TestDatabase,
} from './support/postgres';
import {
  asSse,
  responsesObject,
  responsesStream,
  type UpstreamItem,
} from './support/responses-fixtures';
import { rejection as rejectionOf } from './support/rejection';

const INSTRUCTIONS = 'You are a terse assistant.';
const ANSWER: UpstreamItem[] = [
  { kind: 'reasoning', summaries: ['**Greeting**\n\nSay hi.'] },
  { kind: 'message', pieces: ['Hel', 'lo'] },
];
/** The input the fake upstream answers with a stream it cuts mid-message. */
const CUT = 'cut this answer';
const rejection = (p: Promise<unknown>) => rejectionOf<InstanceType<typeof OpenAI.APIError>>(p);

/** Two models on one OpenAI upstream, so that a key can be scoped to one of them. */
function catalog(url: string): string {
  return writeCatalog(`
providers:
  - { name: fake-openai, kind: openai, base_url: ${url}/v1, api_key_env: TEST_UPSTREAM_KEY }
models:
  - { id: test-gpt, upstream_id: upstream-gpt, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 1 } }
  - { id: test-gpt-mini, upstream_id: upstream-gpt-mini, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 1 } }
`);
}

/** The fixtures' ids (`resp_up_1`, `rs_up_0`, …) made unique to one upstream response. */
function withIds<T>(value: T, tag: string): T {
  const text = JSON.stringify(value)
    .replaceAll('"resp_up_1"', `"resp_${tag}"`)
    .replace(/"(rs|msg|fc)_up_(\d+)"/g, `"$1_${tag}_$2"`);
  return JSON.parse(text) as T;
}

/**
 * A fake OpenAI that mints new ids for every response it creates, and holds each one for
 * GET, DELETE and input_items; `legacy` ids it holds too, though no key made them here.
 */
function storingUpstream(upstream: FakeUpstream, legacy: string[]): void {
  let made = 0;
  const hold = (tag: string): void => {
    const id = `resp_${tag}`;
    upstream.on(`/v1/responses/${id}`, (req): Reply => {
      if (req.method === 'DELETE') {
        return { json: { id, object: 'response', deleted: true } };
      }
      return { json: withIds(responsesObject('upstream-gpt', ANSWER), tag) };
    });
    upstream.on(`/v1/responses/${id}/input_items`, () => ({
      json: {
        object: 'list',
        data: [
          {
            id: `msg_in_${tag}`,
            type: 'message',
            role: 'user',
            content: [{ type: 'input_text', text: 'hi' }],
          },
        ],
        first_id: `msg_in_${tag}`,
        last_id: `msg_in_${tag}`,
        has_more: false,
      },
    }));
  };
  upstream.on('/v1/responses', (req): Reply => {
    const tag = `o${++made}`;
    hold(tag);
    const model = (req.body as { model: string }).model;
    if ((req.body as { input?: unknown }).input === CUT) {
      // The connection drops in the middle of the answer's message, before any terminal event.
      const events = withIds(responsesStream(model, ANSWER, 'none'), tag);
      const at = events.findIndex((e) => e.type === 'response.output_text.delta');
      return { sse: asSse(events.slice(0, at + 1)), after: 'destroy' };
    }
    return (req.body as { stream?: boolean }).stream === true
      ? { sse: asSse(withIds(responsesStream(model, ANSWER), tag)) }
      : { json: withIds(responsesObject(model, ANSWER), tag) };
  });
  for (const id of legacy) {
    hold(id.replace(/^resp_/, ''));
  }
}

/** OpenAI's answer to a response id it does not know. */
const unknownResponse = (id: string) => ({
  error: {
    message: `Response with id '${id}' not found.`,
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
});

interface Keys {
  a: string;
  aId: string;
  /** Another key of A's team. */
  mate: string;
  b: string;
  /** May use test-gpt and test-gpt-mini until a test narrows it. */
  scoped: string;
  scopedId: string;
}

/**
 * A gateway on `backend` with a storing fake upstream, the admin token, TEST_KEY as an
 * admin key (keys file) and managed keys a, mate (same team), b (another team), scoped.
 */
function ownersSuite(backend: () => Promise<StoreBackend>) {
  const t = {} as { upstream: FakeUpstream; gw: TestGateway; keys: Keys };
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const store = await backend();
    drop = store.drop;
    t.upstream = await new FakeUpstream().start();
    storingUpstream(t.upstream, ['resp_legacy']);
    t.gw = await startGateway({
      CATALOG_PATH: catalog(t.upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_KEYS_FILE: adminKeysFile(),
      REDIS_URL: '',
      ...store.env,
    });
    const a = await createKey(t.gw, { name: 'a', owner: 'alpha' });
    const mate = await createKey(t.gw, { name: 'mate', owner: 'alpha' });
    const b = await createKey(t.gw, { name: 'b', owner: 'beta' });
    const scoped = await createKey(t.gw, { name: 's', models: ['test-gpt', 'test-gpt-mini'] });
    t.keys = {
      a: a.key,
      aId: a.id,
      mate: mate.key,
      b: b.key,
      scoped: scoped.key,
      scopedId: scoped.id,
    };
  }, 90_000);
  afterAll(async () => {
    await t.gw?.close();
    await t.upstream?.stop();
    await drop?.();
  });
  return t;
}

describeOnEachStore('stored responses belong to the key that made them', 'owners', (backend) => {
  const t = ownersSuite(backend);
  const client = (key: string) => new OpenAI({ baseURL: t.gw.baseURL, apiKey: key, maxRetries: 0 });
  const create = (key: string, extra: Record<string, unknown> = {}) =>
    client(key).responses.create({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'hi',
      ...extra,
    } as never) as unknown as Promise<OpenAI.Responses.Response>;
  const call = (key: string, method: string, path: string) =>
    fetch(`${t.gw.baseURL}/responses/${path}`, {
      method,
      headers: { authorization: `Bearer ${key}` },
    });
  /** Runs `fn` and returns how many requests the upstream received meanwhile. */
  const upstreamCalls = async (fn: () => Promise<unknown>): Promise<number> => {
    const before = t.upstream.requests.length;
    await fn();
    return t.upstream.requests.length - before;
  };

  it("refuses another key's GET, DELETE and input_items with OpenAI's 404, without calling the upstream", async () => {
    const made = await create(t.keys.a);
    for (const key of [t.keys.b, t.keys.mate]) {
      const calls = await upstreamCalls(async () => {
        for (const [method, path] of [
          ['GET', made.id],
          ['GET', `${made.id}?model=test-gpt`],
          ['GET', `${made.id}/input_items`],
          ['DELETE', made.id],
        ]) {
          const res = await call(key, method, path);
          expect(res.status).toBe(404);
          expect(await res.json()).toEqual(unknownResponse(made.id));
        }
        const e = await rejection(client(key).responses.retrieve(made.id));
        expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      });
      expect(calls).toBe(0);
    }
    // The owner still reaches it, and needs no ?model= to.
    const own = await client(t.keys.a).responses.retrieve(made.id);
    expect(own.id).toBe(made.id);
    const items = await client(t.keys.a).responses.inputItems.list(made.id);
    expect(items.data.map((i) => i.id)).toEqual([`msg_in_${made.id.slice(5)}`]);
    expect(t.upstream.last().url).toBe(`/v1/responses/${made.id}/input_items`);
  });

  it("refuses another key's continuations (previous_response_id, item_reference, item ids) before any upstream call", async () => {
    const made = await create(t.keys.a);
    const reasoning = made.output.find((item) => item.type === 'reasoning')!;
    const calls = await upstreamCalls(async () => {
      const e1 = await rejection(create(t.keys.b, { previous_response_id: made.id }));
      expect(e1).toBeInstanceOf(OpenAI.BadRequestError);
      expect(e1.error).toEqual({
        message: `Previous response with id '${made.id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      });
      const e2 = await rejection(
        create(t.keys.b, { input: [{ type: 'item_reference', id: reasoning.id }] }),
      );
      expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
      expect(e2.error).toMatchObject({
        message: expect.stringContaining(`Item with id '${reasoning.id}' not found.`),
        type: 'invalid_request_error',
        param: 'input',
        code: null,
      });
      // A reasoning item named by id only would be read from A's store.
      const e3 = await rejection(
        create(t.keys.mate, { input: [{ type: 'reasoning', id: reasoning.id, summary: [] }] }),
      );
      expect(e3).toBeInstanceOf(OpenAI.NotFoundError);
    });
    expect(calls).toBe(0);
    // The owner continues from all of them.
    const next = await create(t.keys.a, {
      previous_response_id: made.id,
      input: [
        { type: 'item_reference', id: reasoning.id },
        { role: 'user', content: 'and again' },
      ],
    });
    expect(next.id).not.toBe(made.id);
    expect(t.upstream.last().body).toMatchObject({ previous_response_id: made.id });
  });

  it('records a streamed response when it starts and its output items when it ends', async () => {
    const stream = client(t.keys.a).responses.stream({
      model: 'test-gpt',
      instructions: INSTRUCTIONS,
      input: 'hi',
    });
    const made = await stream.finalResponse();
    const message = made.output.find((item) => item.type === 'message')!;
    // At once: the terminal event waited for the records.
    const calls = await upstreamCalls(async () => {
      expect((await call(t.keys.b, 'GET', made.id)).status).toBe(404);
      const e = await rejection(
        create(t.keys.b, { input: [{ type: 'item_reference', id: message.id }] }),
      );
      expect(e.status).toBe(404);
    });
    expect(calls).toBe(0);
    await create(t.keys.a, { input: [{ type: 'item_reference', id: message.id }] });
    expect((await call(t.keys.a, 'GET', made.id)).status).toBe(200);
  });

  it('records nothing for store: false, so that even its maker gets the 404 without an upstream call', async () => {
    const made = await create(t.keys.a, { store: false });
    const calls = await upstreamCalls(async () => {
      expect((await call(t.keys.a, 'GET', made.id)).status).toBe(404);
    });
    expect(calls).toBe(0);
  });

  it('forgets a response its owner deleted', async () => {
    const made = await create(t.keys.a);
    await client(t.keys.a).responses.delete(made.id);
    expect(t.upstream.last()).toMatchObject({ method: 'DELETE', url: `/v1/responses/${made.id}` });
    const calls = await upstreamCalls(async () => {
      const res = await call(t.keys.a, 'GET', made.id);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(unknownResponse(made.id));
    });
    expect(calls).toBe(0);
  });

  it("applies the key's model scope: a response of a model the key may no longer use is unknown", async () => {
    const made = await create(t.keys.scoped);
    expect((await call(t.keys.scoped, 'GET', made.id)).status).toBe(200);
    const narrowed = await admin(t.gw, 'PATCH', `/keys/${t.keys.scopedId}`, {
      models: ['test-gpt-mini'],
    });
    expect(narrowed.status).toBe(200);
    await eventually(
      async () => ((await call(t.keys.scoped, 'GET', made.id)).status === 404 ? true : undefined),
      2000,
      'the narrowed scope to apply',
    );
    const calls = await upstreamCalls(async () => {
      const res = await call(t.keys.scoped, 'DELETE', made.id);
      expect(await res.json()).toEqual(unknownResponse(made.id));
      const e = await rejection(
        client(t.keys.scoped).responses.create({
          model: 'test-gpt-mini',
          instructions: INSTRUCTIONS,
          input: 'hi',
          previous_response_id: made.id,
        }),
      );
      expect(e.code).toBe('previous_response_not_found');
    });
    expect(calls).toBe(0);
  });

  it('owns the output items of a stream cut mid-answer from the moment each one started', async () => {
    const started: string[] = [];
    const failed = await client(t.keys.a)
      .responses.create({ model: 'test-gpt', instructions: INSTRUCTIONS, input: CUT, stream: true })
      .then(async (stream) => {
        for await (const event of stream) {
          if (event.type === 'response.output_item.added') {
            started.push(event.item.id!);
          }
        }
      })
      .then(
        () => false,
        () => true,
      );
    expect(failed).toBe(true);
    expect(started).toHaveLength(2);
    const [reasoning, message] = started;
    const calls = await upstreamCalls(async () => {
      // Another key carrying the started reasoning item back would read it from A's store.
      const e1 = await rejection(
        create(t.keys.b, { input: [{ type: 'reasoning', id: reasoning, summary: [] }] }),
      );
      expect(e1).toBeInstanceOf(OpenAI.NotFoundError);
      // Recorded, so not even an admin key reaches it.
      const e2 = await rejection(
        create(TEST_KEY, { input: [{ type: 'item_reference', id: message }] }),
      );
      expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
    });
    expect(calls).toBe(0);
    // Its maker may refer to it.
    await create(t.keys.a, { input: [{ type: 'item_reference', id: message }] });
    expect(t.upstream.last().body).toMatchObject({
      input: [{ type: 'item_reference', id: message }],
    });
  });

  it('looks up no carried output id of a stateless request (store: false), only references and stored reasoning', async () => {
    const made = await create(t.keys.a);
    const reasoning = made.output.find((item) => item.type === 'reasoning')!;
    const message = made.output.find((item) => item.type === 'message')!;
    // Codex sends its output items back, ids included, with store: false: they carry their content.
    await create(t.keys.b, {
      store: false,
      input: [
        { role: 'user', content: 'hi' },
        { type: 'message', id: message.id, role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'and again' },
      ],
    });
    expect(t.upstream.last().body).toMatchObject({ store: false });
    const calls = await upstreamCalls(async () => {
      const e1 = await rejection(
        create(t.keys.b, { store: false, input: [{ type: 'item_reference', id: message.id }] }),
      );
      expect(e1).toBeInstanceOf(OpenAI.NotFoundError);
      // A reasoning item without encrypted content is read from the store.
      const e2 = await rejection(
        create(t.keys.b, {
          store: false,
          input: [{ type: 'reasoning', id: reasoning.id, summary: [] }],
        }),
      );
      expect(e2).toBeInstanceOf(OpenAI.NotFoundError);
    });
    expect(calls).toBe(0);
  });

  it('refuses an id made before owners were recorded to every key but an admin one', async () => {
    const calls = await upstreamCalls(async () => {
      const res = await call(t.keys.a, 'GET', 'resp_legacy');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(unknownResponse('resp_legacy'));
      const e = await rejection(create(t.keys.a, { previous_response_id: 'resp_legacy' }));
      expect(e.code).toBe('previous_response_not_found');
      const c = await rejection(create(t.keys.a, { conversation: 'conv_someone_elses' }));
      expect(c.status).toBe(404);
      expect(c.param).toBe('conversation');
    });
    expect(calls).toBe(0);
    // TEST_KEY is `admin: true` in the keys file.
    const legacy = await client(TEST_KEY).responses.retrieve('resp_legacy');
    expect(legacy.id).toBe('resp_legacy');
    expect(t.upstream.last().url).toBe('/v1/responses/resp_legacy');
    await create(TEST_KEY, { previous_response_id: 'resp_legacy' });
    expect(t.upstream.last().body).toMatchObject({ previous_response_id: 'resp_legacy' });
  });

  it("gives an admin key no access to another key's recorded response", async () => {
    const made = await create(t.keys.a);
    const calls = await upstreamCalls(async () => {
      expect((await call(TEST_KEY, 'GET', made.id)).status).toBe(404);
    });
    expect(calls).toBe(0);
  });
});

describe('stored responses without a key store (KEY_STORE=off)', () => {
  const t = {} as { upstream: FakeUpstream; gw: TestGateway };
  const OTHER = 'other-static-key-0123456789';
  beforeAll(async () => {
    t.upstream = await new FakeUpstream().start();
    storingUpstream(t.upstream, []);
    t.gw = await startGateway({
      CATALOG_PATH: catalog(t.upstream.url),
      GATEWAY_API_KEYS: `${TEST_KEY},${OTHER}`,
    });
  });
  afterAll(async () => {
    await t.gw?.close();
    await t.upstream?.stop();
  });

  it('keeps owners in memory: one static key cannot read what another made', async () => {
    const made = await new OpenAI({
      baseURL: t.gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 0,
    }).responses.create({ model: 'test-gpt', instructions: INSTRUCTIONS, input: 'hi' });
    const before = t.upstream.requests.length;
    const other = new OpenAI({ baseURL: t.gw.baseURL, apiKey: OTHER, maxRetries: 0 });
    const e = await rejection(other.responses.retrieve(made.id));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(t.upstream.requests.length).toBe(before);
    const own = new OpenAI({ baseURL: t.gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    expect((await own.responses.retrieve(made.id)).id).toBe(made.id);
  });
});

describeWithPostgres('stored response owners shared by two replicas (PostgreSQL)', () => {
  let db: TestDatabase;
  let upstream: FakeUpstream;
  let one: TestGateway;
  let two: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase('owners_replicas');
    upstream = await new FakeUpstream().start();
    storingUpstream(upstream, []);
    const env = {
      CATALOG_PATH: catalog(upstream.url),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      DATABASE_URL: db.url,
      REDIS_URL: '',
    };
    [one, two] = await Promise.all([startGateway(env), startGateway(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await upstream?.stop();
    await db?.drop();
  });

  it('serves the owner on the other replica at once and refuses everyone else there, streamed or not', async () => {
    const a = await createKey(one, { name: 'a', owner: 'alpha' });
    const b = await createKey(one, { name: 'b', owner: 'beta' });
    const on = (gw: TestGateway, key: string) =>
      new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 });
    const body = { model: 'test-gpt', instructions: INSTRUCTIONS, input: 'hi' };
    const plain = await on(one, a.key).responses.create(body);
    const streamed = await on(one, a.key).responses.stream(body).finalResponse();
    for (const made of [plain, streamed]) {
      // Right after the answer, on the replica that did not serve it.
      expect((await on(two, a.key).responses.retrieve(made.id)).id).toBe(made.id);
      const before = upstream.requests.length;
      const e = await rejection(on(two, b.key).responses.retrieve(made.id));
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      const c = await rejection(
        on(two, b.key).responses.create({ ...body, previous_response_id: made.id }),
      );
      expect(c.code).toBe('previous_response_not_found');
      expect(upstream.requests.length).toBe(before);
    }
    const rows = await query<{ id: string; kind: string; key_id: string; team: string }>(
      db.url,
      `SELECT id, kind, key_id, team FROM object_owners WHERE id = '${plain.id}' OR parent_id = '${plain.id}' ORDER BY kind, id`,
    );
    expect(rows).toEqual([
      { id: plain.id, kind: 'response', key_id: a.id, team: 'alpha' },
      ...plain.output
        .map((item) => item.id!)
        .sort()
        .map((id) => ({ id, kind: 'response_item', key_id: a.id, team: 'alpha' })),
    ]);
  });
});
