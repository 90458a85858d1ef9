import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { throwawayDatabase } from './database';

describe('throwawayDatabase', () => {
  const pglite = (dataDir: string, dataDirSet = true) => ({ dataDir, dataDirSet });

  it('says nothing of PostgreSQL, whatever DATA_DIR holds', () => {
    expect(
      throwawayDatabase({
        databaseUrl: 'postgres://db/gw',
        dataDir: 'memory://',
        dataDirSet: true,
      }),
    ).toBeUndefined();
  });

  it('warns of an in-memory database', () => {
    expect(throwawayDatabase(pglite('memory://'))).toMatch(/in memory.*DATABASE_URL.*DATA_DIR/);
  });

  it('warns of a database under the temporary directory, even when DATA_DIR names it', () => {
    const where = join(tmpdir(), 'gw-data');
    expect(throwawayDatabase(pglite(where))).toContain(resolve(where));
    expect(throwawayDatabase(pglite(tmpdir()))).toContain('temporary directory');
  });

  it('warns of the default location, naming the folder and both variables', () => {
    // An absolute folder: a checkout under the temporary directory (CI's clone) would get
    // that warning instead.
    const warning = throwawayDatabase(pglite('/srv/gateway/data', false));
    expect(warning).toContain('/srv/gateway/data');
    expect(warning).toMatch(/DATABASE_URL and DATA_DIR unset/);
  });

  it('trusts a folder the operator chose outside the temporary directory', () => {
    expect(throwawayDatabase(pglite('/var/lib/gateway'))).toBeUndefined();
    expect(throwawayDatabase(pglite(`${tmpdir()}-elsewhere`))).toBeUndefined();
  });
});
