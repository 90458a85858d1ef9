/**
 * `npm run db:migrate`: applies pending migrations to DATABASE_URL (or to the PGlite
 * database in DATA_DIR) and exits. The gateway also does this at boot; this is for
 * deployments that migrate in a separate step.
 */
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrations';

async function main(): Promise<void> {
  const database = await openDatabase({
    databaseUrl: process.env.DATABASE_URL || undefined,
    dataDir: process.env.DATA_DIR || './data',
    poolSize: 1,
  });
  try {
    const applied = await migrateToLatest(database.db as unknown as Kysely<unknown>);
    console.log(
      applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema already up to date',
    );
  } finally {
    await database.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
