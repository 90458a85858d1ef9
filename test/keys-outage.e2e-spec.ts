import { randomBytes } from 'node:crypto';
import { KEY_REPOSITORY, type KeyRepository } from '../src/keys/key-record';
import { startGateway, testCatalog, type TestGateway } from './support/gateway';
import { ADMIN_TOKEN } from './support/key-store';
import {
  createTestDatabase,
  describeWithPostgres,
  PostgresProxy,
  type TestDatabase,
} from './support/postgres';

describeWithPostgres('an uncached key while the key store is down (PostgreSQL)', () => {
  let db: TestDatabase;
  let proxy: PostgresProxy;
  let gw: TestGateway;
  let lookups: jest.SpiedFunction<KeyRepository['findBySecretHash']>;

  beforeAll(async () => {
    db = await createTestDatabase('outage');
    proxy = new PostgresProxy(db.url);
    await proxy.start();
    gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      KEY_STORE: 'database',
      DATABASE_URL: proxy.url,
      REDIS_URL: '',
    });
    // Counts the real repository's reads; each one is a query to the database.
    lookups = jest.spyOn(gw.app.get<KeyRepository>(KEY_REPOSITORY), 'findBySecretHash');
    await proxy.stop();
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await proxy?.stop();
    await db?.drop();
  });

  beforeEach(() => lookups.mockClear());

  const issuedShape = (): string => `gw-${randomBytes(32).toString('base64url')}`;

  it('asks the store once and answers 503 key_store_unavailable (OpenAI envelope)', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issuedShape()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-gpt', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ error: { code: 'key_store_unavailable' } });
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it('asks the store once and answers 503 in the Anthropic envelope on /v1/messages', async () => {
    const res = await fetch(`${gw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': issuedShape(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-gpt', max_tokens: 10, messages: [] }),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(lookups).toHaveBeenCalledTimes(1);
  });
});
