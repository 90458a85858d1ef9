import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { OwnershipUnavailableError } from '../../../ownership/object-ownership.service';
import { KyselyResponseStore } from './response-store';

describe('KyselyResponseStore when the database does not answer', () => {
  // A real driver on a port nobody listens on: every query fails to connect.
  const db = new Kysely<never>({
    dialect: new PostgresDialect({
      pool: new Pool({
        connectionString: 'postgres://gw@127.0.0.1:9/gw',
        connectionTimeoutMillis: 1000,
      }),
    }),
  });
  const store = new KyselyResponseStore(db as never);

  afterAll(() => db.destroy());

  it('refuses reads and deletes with a 503 to retry, not a 500', async () => {
    for (const call of [
      () => store.chain('resp_1', 10, 1_000_000),
      () => store.find(['resp_1']),
      () => store.remove('resp_1'),
    ]) {
      const error: unknown = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OwnershipUnavailableError);
      expect((error as OwnershipUnavailableError).status).toBe(503);
    }
  });
});
