import { deserialize, serialize } from 'node:v8';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { setOwn } from '../../common/own';
import type { WorkerQueryResult } from './pglite-worker';
import type { PgliteSession } from './restarting-pglite';
import { PgliteError } from './protocol';

/**
 * Kysely dialect for a PGlite that runs in a worker thread (PgliteWorker): PostgreSQL's
 * adapter, compiler and introspector, and a driver that sends each compiled statement
 * (SQL text and parameters) to the worker.
 */
export class PgliteWorkerDialect implements Dialect {
  constructor(private readonly worker: PgliteSession) {}

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PgliteWorkerDriver(this.worker);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

/** The one session PGlite has; whoever holds it (a transaction) has the database to itself. */
class PgliteWorkerConnection implements DatabaseConnection {
  constructor(private readonly worker: PgliteSession) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    let result: WorkerQueryResult;
    try {
      result = await this.worker.query(compiledQuery.sql, compiledQuery.parameters);
    } catch (err) {
      throw withCallerStack(err);
    }
    const rows = (FOREIGN_REALM ? result.rows.map(localDates) : result.rows) as R[];
    // As kysely-pglite-dialect reports it: no count when nothing was affected.
    return result.affectedRows ? { numAffectedRows: BigInt(result.affectedRows), rows } : { rows };
  }

  async *streamQuery<R>(
    compiledQuery: CompiledQuery,
    chunkSize = 100,
  ): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) {
      throw new Error('chunkSize must be a positive integer');
    }
    // PGlite has no cursors over the wire here: the rows come at once and are handed out in chunks.
    const { rows } = await this.executeQuery<R>(compiledQuery);
    for (let i = 0; i < rows.length; i += chunkSize) {
      yield { rows: rows.slice(i, i + chunkSize) };
    }
  }
}

/**
 * One connection behind a mutex, as kysely-pglite-dialect does it: PGlite is a single
 * session, so a transaction must hold it from begin to commit/rollback while other
 * callers wait in line (first come, first served).
 */
class PgliteWorkerDriver implements Driver {
  private readonly connection: PgliteWorkerConnection;
  private held = false;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly worker: PgliteSession) {
    this.connection = new PgliteWorkerConnection(worker);
  }

  async init(): Promise<void> {
    // The worker is started (and ready) before the dialect is made.
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) {
      await new Promise<void>((resolve) => this.queue.push(resolve));
    }
    this.held = true;
    return this.connection;
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (connection !== this.connection) {
      return Promise.reject(new Error('Invalid connection'));
    }
    const next = this.queue.shift();
    if (next) {
      next(); // handed over: stays held
    } else {
      this.held = false;
    }
    return Promise.resolve();
  }

  async beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    let begin = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      begin = 'start transaction';
      if (settings.isolationLevel) {
        begin += ` isolation level ${settings.isolationLevel}`;
      }
      if (settings.accessMode) {
        begin += ` ${settings.accessMode}`;
      }
    }
    await connection.executeQuery(CompiledQuery.raw(begin));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.worker.close();
  }
}

/**
 * True when this code runs in another realm than the one messages are decoded in: only
 * under Jest, whose vm context has its own Date, so `instanceof Date` (audit-entry.ts)
 * fails on a Date from the worker. Decoded as messages are, by V8's serializer.
 */
const FOREIGN_REALM = !(deserialize(serialize(new Date(0))) instanceof Date);

/** The row with each Date column remade in this realm. */
function localDates(row: unknown): unknown {
  if (typeof row !== 'object' || row === null) {
    return row;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    setOwn(
      out,
      key,
      Object.prototype.toString.call(value) === '[object Date]'
        ? new Date((value as Date).getTime())
        : value,
    );
  }
  return out;
}

/**
 * A rebuilt error's stack points at the message handler; the caller's (async) frames say
 * which query failed, as Kysely's own PostgreSQL driver adds them.
 */
function withCallerStack(err: unknown): unknown {
  const here = new Error().stack;
  if (err instanceof PgliteError && here) {
    err.stack = `${err.name}: ${err.message}\n${here.split('\n').slice(1).join('\n')}`;
  }
  return err;
}
