import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Kysely, sql } from 'kysely';
import { freshDataDir, removeDataDir } from '../../../test/support/pglite';
import { PgliteWorkerDialect } from './dialect';
import { PgliteWorker, PgliteWorkerGoneError } from './pglite-worker';
import { RestartingPglite } from './restarting-pglite';

/** Ends the worker thread as a crash would, without the orderly close. */
async function kill(worker: PgliteWorker): Promise<void> {
  await (worker as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
}

/** A restarting session on `dir` through Kysely, and every worker it started. */
async function restarting(
  dir: string,
): Promise<{ workers: PgliteWorker[]; db: Kysely<{ t: { v: number } }> }> {
  const workers: PgliteWorker[] = [];
  const session = await RestartingPglite.open(join(dir, 'pglite'), async (location) => {
    const w = await PgliteWorker.start(location);
    workers.push(w);
    return w;
  });
  return { workers, db: new Kysely({ dialect: new PgliteWorkerDialect(session) }) };
}

describe('RestartingPglite', () => {
  let dir: string;
  const quiet = (): void => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  };

  beforeEach(() => {
    dir = freshDataDir();
    quiet();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    removeDataDir(dir);
  });

  it('starts a new worker on the same folder after the first died, with the data committed before', async () => {
    const { workers, db } = await restarting(dir);
    try {
      await sql`CREATE TABLE t (v int)`.execute(db);
      await db.insertInto('t').values({ v: 7 }).execute();
      await new Promise((r) => setTimeout(r, 1_100)); // past the restart interval
      await kill(workers[0]);
      const rows = await db.selectFrom('t').select('v').execute();
      expect(rows).toEqual([{ v: 7 }]);
      expect(workers).toHaveLength(2);
      expect(Logger.prototype.warn).toHaveBeenCalledWith(expect.stringMatching(/started again/));
    } finally {
      await db.destroy();
    }
  });

  it('does not restart a worker that died within a second of its start, and says so', async () => {
    const starts = jest.fn((location: string) => PgliteWorker.start(location));
    const session = await RestartingPglite.open(join(dir, 'pglite'), starts);
    const first = starts.mock.results[0].value as Promise<PgliteWorker>;
    await kill(await first);
    await expect(session.query('SELECT 1', [])).rejects.toThrow(PgliteWorkerGoneError);
    await expect(session.query('SELECT 1', [])).rejects.toThrow(/died again within/);
    expect(starts).toHaveBeenCalledTimes(1);
    await session.close();
  });

  it('does not start a worker once closed', async () => {
    const starts = jest.fn((location: string) => PgliteWorker.start(location));
    const session = await RestartingPglite.open(join(dir, 'pglite'), starts);
    await session.close();
    await expect(session.query('SELECT 1', [])).rejects.toThrow(/closed/);
    expect(starts).toHaveBeenCalledTimes(1);
  });

  it('closes the worker a restart under way is starting', async () => {
    const starts = jest.fn((location: string) => PgliteWorker.start(location));
    const session = await RestartingPglite.open(join(dir, 'pglite'), starts);
    await new Promise((r) => setTimeout(r, 1_100)); // past the restart interval
    await kill((await starts.mock.results[0].value) as PgliteWorker);
    const query = session.query('SELECT 1', []).catch(() => undefined);
    expect(starts).toHaveBeenCalledTimes(2); // the restart is under way
    await session.close();
    await query;
    expect(((await starts.mock.results[1].value) as PgliteWorker).closed).toBe(true);
  });

  it('runs none of its later statements on the new worker, and rolls it back quietly', async () => {
    const { workers, db } = await restarting(dir);
    try {
      await sql`CREATE TABLE t (v int)`.execute(db);
      await new Promise((r) => setTimeout(r, 1_100)); // past the restart interval
      const failed = db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ v: 1 }).execute();
        await kill(workers[0]);
        // Would commit on its own on a new worker, without the insert before it.
        await trx.insertInto('t').values({ v: 2 }).execute();
      });
      await expect(failed).rejects.toThrow(/died during this transaction/);
      // The next statement, outside any transaction, gets a new worker; nothing was written.
      expect(await db.selectFrom('t').select('v').execute()).toEqual([]);
      expect(workers).toHaveLength(2);
    } finally {
      await db.destroy();
    }
  });
});
