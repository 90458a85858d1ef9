/**
 * Live heap of a child process after a full garbage collection, read through the V8
 * inspector: the child is started with `--inspect-port=<port>` (which opens nothing), and
 * SIGUSR1 opens the inspector only when the measurement begins. Unlike RSS, this figure
 * does not move with when V8 last grew or shrank the young generation or gave pages back,
 * so it tells two builds apart by a kilobyte per stream.
 */
import { WebSocket, request } from 'undici';

const CALL_TIMEOUT_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The node flag that fixes the inspector's port without opening it. */
export function inspectPortArg(port: number): string {
  return `--inspect-port=127.0.0.1:${port}`;
}

async function debuggerUrl(port: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await request(`http://127.0.0.1:${port}/json/list`);
      const targets = (await res.body.json()) as { webSocketDebuggerUrl?: string }[];
      const url = targets[0]?.webSocketDebuggerUrl;
      if (url !== undefined) {
        return url;
      }
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`no inspector on port ${port}`);
}

/** An inspector session on the child: each call collects garbage and reads the live heap. */
export class HeapProbe {
  private next = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (event) => {
      const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (msg.id !== undefined) {
        this.pending.get(msg.id)?.(msg.result);
        this.pending.delete(msg.id);
      }
    });
  }

  /** Opens the inspector of `pid` (started with {@link inspectPortArg}) and connects. */
  static async open(pid: number, port: number): Promise<HeapProbe> {
    process.kill(pid, 'SIGUSR1');
    const ws = new WebSocket(await debuggerUrl(port));
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error('inspector connection failed')), {
        once: true,
      });
    });
    return new HeapProbe(ws);
  }

  /** One inspector command; rejects after CALL_TIMEOUT_MS (a full collection takes < 1 s). */
  private call(method: string, params?: object): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`inspector: no answer to ${method} in ${CALL_TIMEOUT_MS} ms`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * Bytes of live heap: two full collections (the second frees what the first's finalizers
   * let go), then `heapUsed` plus `arrayBuffers`, the Buffers' bytes, which live outside
   * the V8 heap (a request body a stream keeps, or the 8 KB pool slab a slice of it pins).
   */
  async liveHeapBytes(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage');
    await this.call('HeapProfiler.collectGarbage');
    const reply = (await this.call('Runtime.evaluate', {
      expression:
        '(({ heapUsed, arrayBuffers }) => heapUsed + arrayBuffers)(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: number } };
    return reply.result.value;
  }

  close(): void {
    this.ws.close();
  }
}
