import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Kysely } from 'kysely';
import type { AllConfig } from '../config';
import { OpenDatabase, openDatabase, throwawayDatabase } from './database';
import { migrateToLatest } from './migrations';

/** The open database, or null when KEY_STORE=off. */
export const DATABASE = Symbol('DATABASE');

const BOOT_ATTEMPTS = 5;

/** Opens the database and brings its schema up to date; retries briefly while it starts. */
async function openAndMigrate(
  config: ConfigService<AllConfig, true>,
): Promise<OpenDatabase | null> {
  const store = config.get('store', { infer: true });
  if (store.mode === 'off') {
    return null;
  }
  const logger = new Logger('Database');
  const throwaway = throwawayDatabase(store);
  if (throwaway !== undefined) {
    logger.warn(throwaway);
  }
  const database = await openDatabase(store);
  for (let attempt = 1; ; attempt++) {
    try {
      const applied = await migrateToLatest(database.db as unknown as Kysely<unknown>);
      const where = database.kind === 'postgres' ? 'PostgreSQL' : `PGlite in ${store.dataDir}`;
      logger.log(
        `${where}: schema up to date${applied.length > 0 ? ` (applied ${applied.join(', ')})` : ''}`,
      );
      return database;
    } catch (err) {
      if (attempt >= BOOT_ATTEMPTS) {
        await database.close();
        throw err;
      }
      logger.warn(`database not ready (${(err as Error).message}); retrying`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: OpenDatabase | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.database?.close();
  }
}

/** The key store and ledger database, shared by the keys, usage and admin modules. */
@Global()
@Module({
  providers: [
    { provide: DATABASE, inject: [ConfigService], useFactory: openAndMigrate },
    DatabaseLifecycle,
  ],
  exports: [DATABASE],
})
export class DbModule {}
