import { Logger } from '@nestjs/common';
import { PgliteWorker, PgliteWorkerGoneError, type WorkerQueryResult } from './pglite-worker';

/** What the dialect needs of a PGlite in a worker. */
export interface PgliteSession {
  query(sql: string, params: readonly unknown[]): Promise<WorkerQueryResult>;
  close(): Promise<void>;
}

/** The least time between two restarts, so a worker that dies at once cannot spin. */
const RESTART_INTERVAL_MS = 1_000;

/**
 * A folder-backed PGlite whose worker is started again when it dies (a WebAssembly trap,
 * an out-of-memory exit): the statements in flight fail, the next one starts a new worker
 * on the same folder, which PostgreSQL's own recovery brings back to its last commit.
 * Readiness does not read the database, so without this a dead worker would fail every
 * query until someone restarted the process. In-memory databases are not restarted: a new
 * one would be empty, without its schema.
 */
export class RestartingPglite implements PgliteSession {
  private readonly logger = new Logger('Database');
  private starting?: Promise<PgliteWorker>;
  private lastStart = Date.now();
  private closed = false;
  /** The worker the open transaction began on (the dialect holds the one connection meanwhile). */
  private transaction?: PgliteWorker;

  private constructor(
    private readonly location: string,
    private worker: PgliteWorker,
    private readonly start: (location: string) => Promise<PgliteWorker>,
  ) {}

  /** Starts the first worker; `start` is injectable for tests. */
  static async open(
    location: string,
    start: (location: string) => Promise<PgliteWorker> = (at) => PgliteWorker.start(at),
  ): Promise<RestartingPglite> {
    return new RestartingPglite(location, await start(location), start);
  }

  async query(sql: string, params: readonly unknown[]): Promise<WorkerQueryResult> {
    const statement = transactionStatement(sql);
    if (!this.closed && this.transaction?.closed === true) {
      // The transaction died with its worker: none of its later statements may run on a new
      // one, where each would commit on its own without those before it. Its rollback has
      // nothing left to undo; its commit fails.
      if (statement === 'end') {
        this.transaction = undefined;
        if (/^rollback/i.test(sql)) {
          return { rows: [], affectedRows: 0 };
        }
      }
      throw new PgliteWorkerGoneError('the PGlite worker died during this transaction');
    }
    const worker = this.worker.closed && !this.closed ? await this.restart() : this.worker;
    if (statement === 'begin') {
      this.transaction = worker;
    } else if (statement === 'end') {
      this.transaction = undefined;
    }
    return worker.query(sql, params);
  }

  async close(): Promise<void> {
    this.closed = true;
    // A restart under way would leave its new worker running: close that one once started.
    await this.starting?.catch(() => undefined);
    await this.worker.close();
  }

  private restart(): Promise<PgliteWorker> {
    this.starting ??= (async () => {
      try {
        const wait = this.lastStart + RESTART_INTERVAL_MS - Date.now();
        if (wait > 0) {
          throw new PgliteWorkerGoneError(
            `the PGlite worker died again within ${RESTART_INTERVAL_MS} ms of its start; retrying after ${wait} ms`,
          );
        }
        this.lastStart = Date.now();
        this.worker = await this.start(this.location);
        this.logger.warn('the PGlite worker was started again after it died');
        return this.worker;
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }
}

/** The dialect's transaction statements (dialect.ts sends exactly these), else undefined. */
function transactionStatement(sql: string): 'begin' | 'end' | undefined {
  if (/^(begin|start transaction)\b/i.test(sql)) {
    return 'begin';
  }
  return /^(commit|rollback)\b/i.test(sql) ? 'end' : undefined;
}
