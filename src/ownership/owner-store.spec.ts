import { Kysely, sql } from 'kysely';
import { freshDataDir, removeDataDir } from '../../test/support/pglite';
import { openDatabase, type OpenDatabase } from '../db/database';
import { migrateToLatest } from '../db/migrations';
import { KyselyOwnerStore, type OwnedObject } from './owner-store';

/** The database's owner records, on a migrated PGlite (the same SQL as on PostgreSQL). */
describe('KyselyOwnerStore', () => {
  let open: OpenDatabase;
  let dir: string;
  let store: KyselyOwnerStore;

  const owned = (id: string, keyId: string, extra: Partial<OwnedObject> = {}): OwnedObject => ({
    id,
    kind: 'response',
    keyId,
    provider: 'openai',
    model: 'gpt-x',
    ...extra,
  });

  beforeAll(async () => {
    dir = freshDataDir();
    open = await openDatabase({ dataDir: dir, databaseUrl: undefined, poolSize: 1 });
    await migrateToLatest(open.db as Kysely<unknown>);
    store = new KyselyOwnerStore(open.db);
  });
  afterAll(async () => {
    await open.close();
    removeDataDir(dir);
  });

  it('records objects in one statement, the first owner of an id keeping it', async () => {
    await store.insert([
      owned('resp_1', 'key_a', { team: 'red' }),
      owned('msg_1', 'key_a', { kind: 'response_item', parentId: 'resp_1' }),
    ]);
    await store.insert([owned('resp_1', 'key_b'), owned('resp_2', 'key_b')]);
    const found = await store.find(['resp_1', 'msg_1', 'resp_2', 'resp_x']);
    expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      owned('msg_1', 'key_a', { kind: 'response_item', parentId: 'resp_1' }),
      owned('resp_1', 'key_a', { team: 'red' }),
      owned('resp_2', 'key_b'),
    ]);
  });

  it('turns synchronous commit off for its own statement only', async () => {
    await store.insert([owned('resp_3', 'key_c')]);
    const { rows } = await sql<{
      synchronous_commit: string;
    }>`SELECT current_setting('synchronous_commit') AS synchronous_commit`.execute(open.db);
    expect(rows[0].synchronous_commit).toBe('on');
  });

  it('removes an object with its items', async () => {
    await store.remove('resp_1');
    expect((await store.find(['resp_1', 'msg_1', 'resp_2'])).map((o) => o.id)).toEqual(['resp_2']);
  });
});
