import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool } from 'pg';
import type { StoreConfig } from '../config';
import { type DbEvents, LocalEvents, PgEvents } from './events';
import { PgliteWorkerDialect } from './pglite/dialect';
import { PgliteWorker } from './pglite/pglite-worker';
import { RestartingPglite } from './pglite/restarting-pglite';
import type { Database } from './schema';

/** Statements slower than this fail, so a hung database cannot hold a caller forever. */
const STATEMENT_TIMEOUT_MS = 10_000;
/** Getting a connection from an unreachable server fails after this. */
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * An open database: the query builder, the change notifications, and an orderly close
 * (registered drains run first, so the ledger can flush its last rows before the pool
 * goes away, whatever order Nest calls shutdown hooks in).
 */
export class OpenDatabase {
  private readonly drains: (() => Promise<void>)[] = [];
  private closing?: Promise<void>;

  constructor(
    readonly kind: 'postgres' | 'pglite',
    readonly db: Kysely<Database>,
    readonly events: DbEvents,
    private readonly release: () => Promise<void>,
  ) {}

  /** Runs `drain` before the connection closes. */
  beforeClose(drain: () => Promise<void>): void {
    this.drains.push(drain);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const drain of this.drains) {
        await drain().catch(() => undefined);
      }
      await this.events.close();
      await this.db.destroy();
      await this.release();
    })();
    return this.closing;
  }
}

/**
 * Why the embedded database's contents would be lost, or undefined when they are kept in
 * a folder the operator chose: in memory, under the temporary directory, or in the default
 * ./data, which in a container is the container's own filesystem.
 */
export function throwawayDatabase(
  config: Pick<StoreConfig, 'databaseUrl' | 'dataDir' | 'dataDirSet'>,
): string | undefined {
  if (config.databaseUrl) {
    return undefined;
  }
  const fix = 'set DATABASE_URL (PostgreSQL) or DATA_DIR to a folder that is kept';
  if (config.dataDir.startsWith('memory://')) {
    return `the embedded database is in memory (DATA_DIR=${config.dataDir}): keys and usage are lost when the process exits; ${fix}`;
  }
  const inTmp = relative(tmpdir(), resolve(config.dataDir));
  if (!inTmp.startsWith('..') && !isAbsolute(inTmp)) {
    return `the embedded database is under the temporary directory (${resolve(config.dataDir)}), which may be cleared at any time; ${fix}`;
  }
  if (!config.dataDirSet) {
    return `the embedded database is in the default location ${resolve(config.dataDir)} (DATABASE_URL and DATA_DIR unset): in a container it is lost with the container; ${fix}`;
  }
  return undefined;
}

/** PostgreSQL when `databaseUrl` is set, otherwise PGlite in `dataDir`. */
export async function openDatabase(
  config: Pick<StoreConfig, 'databaseUrl' | 'dataDir' | 'poolSize'>,
): Promise<OpenDatabase> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, config.poolSize)
    : openPglite(config.dataDir);
}

function openPostgres(url: string, poolSize: number): OpenDatabase {
  const logger = new Logger('Database');
  const connection = {
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    application_name: 'inference-gateway',
  };
  const pool = new Pool({ ...connection, max: poolSize, idleTimeoutMillis: 30_000 });
  // A connection that breaks (database restart) must not crash the process: idle ones
  // report through the pool, checked-out ones emit 'error' on the client while their
  // query fails on its own, so every client gets a listener.
  pool.on('error', (err) => logger.warn(`idle database connection lost: ${err.message}`));
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const events = new PgEvents(connection, async (channel, payload) => {
    await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
  });
  void events.start();
  // The Kysely dialect ends the pool on destroy.
  return new OpenDatabase('postgres', db, events, () => Promise.resolve());
}

/**
 * PGlite in a worker thread (pglite/): its WebAssembly PostgreSQL would otherwise run every
 * statement on the event loop and stall all requests while it works.
 */
async function openPglite(dataDir: string): Promise<OpenDatabase> {
  const inMemory = dataDir.startsWith('memory://');
  let location = dataDir;
  if (!inMemory) {
    location = resolve(dataDir, 'pglite');
    mkdirSync(location, { recursive: true });
  }
  const worker = inMemory
    ? await PgliteWorker.start(location)
    : await RestartingPglite.open(location);
  const db = new Kysely<Database>({ dialect: new PgliteWorkerDialect(worker) });
  // The dialect closes the worker on destroy; this covers a destroy that failed.
  return new OpenDatabase('pglite', db, new LocalEvents(), () => worker.close());
}
