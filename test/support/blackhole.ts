import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';

/**
 * A listener that never accepts: its event loop blocks as soon as it listens (writes to a
 * pipe are synchronous on Linux, so the port is out first). Backlog 1: Node reads 0 as 511.
 */
const LISTENER = `
const server = require('node:net').createServer();
server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  process.stdout.write(server.address().port + '\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
`;

/**
 * A loopback port whose TCP connects never complete, offline and without privileges: a
 * listener in a child process that never accepts, whose accept queue is then filled, so
 * that the kernel drops every further SYN (the client's connect hangs until its timeout).
 */
export class Blackhole {
  port = 0;
  private child: ChildProcess | undefined;
  private readonly fillers: Socket[] = [];

  async start(): Promise<this> {
    const child = spawn(process.execPath, ['-e', LISTENER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    this.port = await new Promise<number>((resolve, reject) => {
      child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once('error', reject);
    });
    // Fill the accept queue: connect until one connect stays pending.
    for (let i = 0; i < 16; i++) {
      const socket = connect(this.port, '127.0.0.1');
      socket.on('error', () => undefined);
      this.fillers.push(socket);
      const queued = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 300);
        socket.once('connect', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!queued) {
        return this;
      }
    }
    throw new Error('the blackhole accept queue never filled up');
  }

  stop(): void {
    for (const socket of this.fillers) {
      socket.destroy();
    }
    this.child?.kill('SIGKILL');
  }
}
