import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { Kysely, sql } from 'kysely';
import { freshDataDir, removeDataDir } from '../../../test/support/pglite';
import { PgliteWorkerDialect } from './dialect';
import { PgliteWorker, PgliteWorkerGoneError } from './pglite-worker';
import { PgliteError } from './protocol';

interface Tables {
  items: { id: number; name: string; n: bigint | null; at: Date | null; data: Uint8Array | null };
  counter: { id: number; value: number };
}

/** A worker on a copy of the template cluster (an initdb per test would cost seconds). */
async function open(): Promise<{ worker: PgliteWorker; db: Kysely<Tables>; dir: string }> {
  const dir = freshDataDir();
  const worker = await PgliteWorker.start(join(dir, 'pglite'));
  return { worker, db: new Kysely<Tables>({ dialect: new PgliteWorkerDialect(worker) }), dir };
}

describe('PGlite in a worker thread, through Kysely', () => {
  let db: Kysely<Tables>;
  let dir: string;

  beforeAll(async () => {
    ({ db, dir } = await open());
    await sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, n int8, at timestamptz, data bytea, doc jsonb)`.execute(
      db,
    );
    await sql`CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)`.execute(db);
    await db.insertInto('counter').values({ id: 1, value: 0 }).execute();
  });

  afterAll(async () => {
    await db.destroy();
    removeDataDir(dir);
  });

  it('sends parameters and returns rows with the types PGlite parses', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const inserted = await db
      .insertInto('items')
      .values({ id: 1, name: 'a', n: 9007199254740993n, at, data: Uint8Array.from([1, 2, 255]) })
      .executeTakeFirstOrThrow();
    expect(inserted.numInsertedOrUpdatedRows).toBe(1n);

    const row = await db
      .selectFrom('items')
      .selectAll()
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      id: 1,
      name: 'a',
      n: 9007199254740993n,
      at,
      data: Uint8Array.from([1, 2, 255]),
      doc: null,
    });
    expect(row.at).toBeInstanceOf(Date);

    const { rows } = await sql<{
      doc: unknown;
    }>`SELECT ${JSON.stringify({ k: [1, 'x'] })}::jsonb AS doc`.execute(db);
    expect(rows[0].doc).toEqual({ k: [1, 'x'] });
  });

  it('reports affected rows as Kysely reads them', async () => {
    await db
      .insertInto('items')
      .values([
        { id: 2, name: 'b' },
        { id: 3, name: 'c' },
      ])
      .execute();
    const updated = await db
      .updateTable('items')
      .set({ name: 'z' })
      .where('id', 'in', [2, 3])
      .executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(2n);
    const none = await db.deleteFrom('items').where('id', '=', 99).executeTakeFirst();
    expect(none.numDeletedRows).toBe(0n);
  });

  it('rolls back a transaction that throws', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 10, name: 'gone' }).execute();
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect(await db.selectFrom('items').select('id').where('id', '=', 10).execute()).toEqual([]);
  });

  it('gives a transaction the connection to itself: concurrent ones run one after the other', async () => {
    const trace: string[] = [];
    const bump = (name: string) =>
      db.transaction().execute(async (trx) => {
        trace.push(`${name} begin`);
        const { value } = await trx
          .selectFrom('counter')
          .select('value')
          .where('id', '=', 1)
          .executeTakeFirstOrThrow();
        await sleep(20); // a read-modify-write that would lose an update if interleaved
        await trx
          .updateTable('counter')
          .set({ value: value + 1 })
          .where('id', '=', 1)
          .execute();
        trace.push(`${name} end`);
      });
    const outside = sleep(5).then(() =>
      db.selectFrom('counter').select('value').executeTakeFirstOrThrow(),
    );
    await Promise.all([bump('a'), bump('b'), bump('c')]);
    expect(trace).toEqual(['a begin', 'a end', 'b begin', 'b end', 'c begin', 'c end']);
    const final = await db.selectFrom('counter').select('value').executeTakeFirstOrThrow();
    expect(final.value).toBe(3);
    // A plain query waits its turn too, and never sees a transaction half done.
    expect((await outside).value).toBeGreaterThanOrEqual(1);
  });

  it('keeps the fields of a PostgreSQL error', async () => {
    const err: unknown = await db
      .insertInto('items')
      .values({ id: 1, name: 'dup' })
      .execute()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PgliteError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      code: '23505',
      constraint: 'items_pkey',
      table: 'items',
      schema: 'public',
      severity: 'ERROR',
      detail: 'Key (id)=(1) already exists.',
      message: expect.stringContaining('duplicate key') as unknown,
    });
    expect((err as Error).stack).toContain('dialect.spec.ts');
    // The failed statement left the session usable.
    expect(await db.selectFrom('items').select('id').where('id', '=', 1).execute()).toHaveLength(1);
  });

  it('fails a transaction whose statement fails, and rolls it back', async () => {
    const err: unknown = await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('items').values({ id: 20, name: 'first' }).execute();
        await trx.insertInto('items').values({ id: 20, name: 'again' }).execute();
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '23505' });
    expect(await db.selectFrom('items').select('id').where('id', '=', 20).execute()).toEqual([]);
  });

  it('fails a parameter that cannot be sent, without taking the database down', async () => {
    await expect(sql`SELECT ${{ f: () => 1 }}::text AS f`.execute(db)).rejects.toThrow(
      /could not be cloned/,
    );
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });
});

describe('the PGlite worker going away', () => {
  it('fails queries after close, and closes once', async () => {
    const { worker, db, dir } = await open();
    try {
      await db.destroy();
      await worker.close();
      expect(worker.closed).toBe(true);
      await expect(sql`SELECT 1`.execute(db)).rejects.toThrow(PgliteWorkerGoneError);
      await expect(worker.query('SELECT 1', [])).rejects.toThrow(/closed/);
    } finally {
      removeDataDir(dir);
    }
  });

  it('fails pending and later queries when the worker dies, and logs it', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { worker, db, dir } = await open();
    try {
      // A statement the worker is busy with when it dies.
      const pending = sql`SELECT count(*) FROM generate_series(1, 50000000)`.execute(db);
      await sleep(50);
      await (worker as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await expect(pending).rejects.toThrow(/PGlite worker exited.*unavailable/);
      await expect(sql`SELECT 1`.execute(db)).rejects.toThrow(PgliteWorkerGoneError);
      expect(logged).toHaveBeenCalledWith(expect.stringMatching(/PGlite worker exited/));
      await db.destroy(); // closing a dead worker is quick and quiet
    } finally {
      logged.mockRestore();
      removeDataDir(dir);
    }
  });

  it('rejects a start whose data directory cannot be used', async () => {
    await expect(PgliteWorker.start('/proc/no-such/pglite')).rejects.toThrow();
  });
});
