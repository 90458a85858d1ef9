/**
 * Worker thread entry that owns the PGlite instance, so its WebAssembly runs off the
 * main event loop. Started by PgliteWorker (pglite-worker.ts); speaks protocol.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { type WorkerMessage, type WorkerRequest, type WorkerStart, toWire } from './protocol';

if (!parentPort) {
  throw new Error('db/pglite/worker is a worker thread entry, not a module to import');
}
const port = parentPort;
const post = (message: WorkerMessage): void => port.postMessage(message);

/** Answers one request; never rejects, so the queue behind it keeps going. */
async function handle(pglite: PGlite, request: WorkerRequest): Promise<void> {
  try {
    if (request.op === 'close') {
      if (!pglite.closed) {
        await pglite.close();
      }
      post({ op: 'closed', id: request.id });
      port.close();
      return;
    }
    const result = await pglite.query(request.sql, [...request.params]);
    // A reply that cannot be cloned throws here and is answered as an error below.
    post({
      op: 'result',
      id: request.id,
      rows: result.rows,
      affectedRows: result.affectedRows ?? 0,
    });
  } catch (err) {
    post({ op: 'error', id: request.id, error: toWire(err) });
  }
}

async function main(): Promise<void> {
  const { location } = workerData as WorkerStart;
  let pglite: PGlite;
  try {
    pglite = new PGlite(location);
    await pglite.waitReady;
  } catch (err) {
    post({ op: 'failed', error: toWire(err) });
    port.close();
    return;
  }
  // One request at a time, in arrival order: a close never overtakes a query before it.
  let queue = Promise.resolve();
  port.on('message', (request: WorkerRequest) => {
    queue = queue.then(() => handle(pglite, request));
  });
  post({ op: 'ready' });
}

void main();
