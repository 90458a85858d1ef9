import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import {
  PgliteError,
  type WorkerCommand,
  type WorkerMessage,
  type WorkerRequest,
  type WorkerStart,
} from './protocol';

/** How long close() waits for PGlite to shut down in the worker before terminating it. */
const CLOSE_TIMEOUT_MS = 5_000;

/** Rows and affected-row count of one statement, as PGlite reports them. */
export interface WorkerQueryResult {
  rows: unknown[];
  affectedRows: number;
}

/** The worker is gone (closed, crashed or exited): every pending and later query fails with this. */
export class PgliteWorkerGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgliteWorkerGoneError';
  }
}

interface Pending {
  resolve(value: WorkerQueryResult | undefined): void;
  reject(err: Error): void;
}

/**
 * The worker entry beside this file: the compiled `.js` in dist, or the `.ts` source under
 * ts-jest / ts-node, which the worker then needs ts-node to load.
 */
function workerEntry(): { file: string; execArgv?: string[] } {
  if (__filename.endsWith('.ts')) {
    return {
      file: join(__dirname, 'worker.ts'),
      execArgv: ['--require', 'ts-node/register/transpile-only'],
    };
  }
  return { file: join(__dirname, 'worker.js') };
}

/**
 * A PGlite instance in a worker thread, reached by message. Queries are answered in the
 * order they were sent. The worker holds the process open only while a request is
 * pending, as a PGlite on the main thread held nothing open.
 */
export class PgliteWorker {
  private readonly logger = new Logger('Database');
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone?: PgliteWorkerGoneError;
  private closing?: Promise<void>;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    let crash: Error | undefined;
    worker.on('error', (err) => {
      crash = err;
    });
    worker.on('exit', (code) => this.onExit(code, crash));
  }

  /** Starts a worker with PGlite in `location` (a folder or `memory://`), resolved once it is ready. */
  static start(location: string): Promise<PgliteWorker> {
    const entry = workerEntry();
    const worker = new Worker(entry.file, {
      workerData: { location } satisfies WorkerStart,
      ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
    });
    return new Promise((resolve, reject) => {
      const onStart = (message: WorkerMessage): void => {
        if (message.op === 'failed') {
          cleanup();
          void worker.terminate();
          reject(new PgliteError(message.error));
        } else if (message.op === 'ready') {
          cleanup();
          const client = new PgliteWorker(worker);
          worker.unref();
          resolve(client);
        }
      };
      const onError = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const onExit = (code: number): void => {
        cleanup();
        reject(
          new PgliteWorkerGoneError(`the PGlite worker exited (code ${code}) before it was ready`),
        );
      };
      const cleanup = (): void => {
        worker.off('message', onStart);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onStart);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }

  /** True once the worker is gone or closing: queries then fail at once. */
  get closed(): boolean {
    return this.gone !== undefined || this.closing !== undefined;
  }

  /** Runs one statement in the worker. PostgreSQL errors arrive as PgliteError with their fields. */
  query(sql: string, params: readonly unknown[]): Promise<WorkerQueryResult> {
    if (this.closing) {
      return Promise.reject(new PgliteWorkerGoneError('the PGlite worker is closed'));
    }
    return this.send({ op: 'query', sql, params }) as Promise<WorkerQueryResult>;
  }

  /** Closes PGlite in the worker (after the queries already sent), then ends the worker. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.gone) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
        });
        await Promise.race([this.send({ op: 'close' }).catch(() => undefined), timeout]);
        clearTimeout(timer);
      }
      await this.worker.terminate();
    })();
    return this.closing;
  }

  private send(command: WorkerCommand): Promise<WorkerQueryResult | undefined> {
    if (this.gone) {
      return Promise.reject(this.gone);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage({ ...command, id } satisfies WorkerRequest);
      } catch (err) {
        // A parameter that cannot be cloned (a function, a class instance with private state).
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (this.pending.size === 0) {
        this.worker.ref();
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) {
      this.worker.unref();
    }
    return pending;
  }

  private onMessage(message: WorkerMessage): void {
    switch (message.op) {
      case 'result':
        this.settle(message.id)?.resolve({
          rows: message.rows,
          affectedRows: message.affectedRows,
        });
        return;
      case 'closed':
        this.settle(message.id)?.resolve(undefined);
        return;
      case 'error':
        this.settle(message.id)?.reject(new PgliteError(message.error));
        return;
      case 'ready':
      case 'failed':
        return;
    }
  }

  private onExit(code: number, crash: Error | undefined): void {
    const expected = this.closing !== undefined && crash === undefined;
    const why = crash ? `crashed: ${crash.message}` : `exited (code ${code})`;
    this.gone = new PgliteWorkerGoneError(
      expected
        ? 'the PGlite worker is closed'
        : `the PGlite worker ${why}; the embedded database is unavailable`,
    );
    if (!expected) {
      this.logger.error(this.gone.message);
    }
    for (const pending of this.pending.values()) {
      pending.reject(this.gone);
    }
    this.pending.clear();
  }
}
