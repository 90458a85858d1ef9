import { spawnSync } from 'node:child_process';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The Redis the limits e2e suites use: REDIS_URL, or the one this machine runs. */
export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** PING with a raw socket in a child process: synchronous, so suites can decide to skip. */
function redisAnswers(url: string): boolean {
  const { hostname, port } = new URL(url);
  const script = `
    const s = require('net').connect(${Number(port) || 6379}, ${JSON.stringify(hostname || '127.0.0.1')});
    s.setTimeout(1000, () => process.exit(1));
    s.on('error', () => process.exit(1));
    s.on('connect', () => s.write('PING\\r\\n'));
    s.on('data', (d) => process.exit(/^\\+PONG|^-NOAUTH/.test(String(d)) ? 0 : 1));`;
  return spawnSync(process.execPath, ['-e', script], { timeout: 3000 }).status === 0;
}

/**
 * `describe` when Redis answers; otherwise `describe.skip` after a loud warning, or a
 * failing suite when CI is set (CI must run these tests, not skip them).
 */
export function describeWithRedis(name: string, fn: () => void): void {
  if (redisAnswers(REDIS_URL)) {
    describe(name, fn);
    return;
  }
  const message = `Redis at ${REDIS_URL} does not answer: "${name}" needs a real Redis (set REDIS_URL).`;
  if (process.env.CI) {
    describe(name, () => {
      it('has a Redis to run against (required when CI is set)', () => {
        throw new Error(message);
      });
    });
    return;
  }
  console.warn(`\n\n!!!!!!!!!! SKIPPED: ${message} !!!!!!!!!!\n`);
  describe.skip(name, fn);
}

/** A key prefix no other run or test shares. */
export function uniquePrefix(label: string): string {
  return `gw-test:${process.pid}-${Date.now().toString(36)}:${label}:`;
}

/** Deletes every key under `prefix` (SCAN, never KEYS). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) {
        await redis.del(...keys);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * A TCP proxy in front of the real Redis, so a test can make "Redis" vanish (connections
 * cut, new ones refused) or hang (bytes swallowed) without touching the real server.
 */
export class RedisProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private swallowing = false;
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<void> {
    const { hostname, port: target } = new URL(REDIS_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target) || 6379, hostname || '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.on('data', (d) => {
        if (!this.swallowing) {
          upstream.write(d);
        }
      });
      upstream.on('data', (d) => client.write(d));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.swallowing = false;
  }

  /** Redis goes away: open connections are cut and new ones refused. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) {
      s.destroy();
    }
    if (server) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Redis hangs: connections stay open, commands are never answered. */
  hang(): void {
    this.swallowing = true;
  }
}
