import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { Client } from 'pg';
import { freshDataDir, removeDataDir } from './pglite';

/** The PostgreSQL the key-store suites use: DATABASE_URL, or the one this machine runs. */
export const POSTGRES_URL =
  process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** Connects with a raw socket in a child process: synchronous, so suites can decide to skip. */
function postgresAnswers(url: string): boolean {
  const { hostname, port } = new URL(url);
  const script = `
    const s = require('net').connect(${Number(port) || 5432}, ${JSON.stringify(hostname || '127.0.0.1')});
    s.setTimeout(1000, () => process.exit(1));
    s.on('error', () => process.exit(1));
    s.on('connect', () => process.exit(0));`;
  return spawnSync(process.execPath, ['-e', script], { timeout: 3000 }).status === 0;
}

/**
 * `describe` when PostgreSQL answers; otherwise `describe.skip` after a loud warning, or a
 * failing suite when CI is set (CI must run these tests, not skip them).
 */
export function describeWithPostgres(name: string, fn: () => void): void {
  if (postgresAnswers(POSTGRES_URL)) {
    describe(name, fn);
    return;
  }
  const message = `PostgreSQL at ${POSTGRES_URL} does not answer: "${name}" needs one (set DATABASE_URL).`;
  if (process.env.CI) {
    describe(name, () => {
      it('has a PostgreSQL to run against (required when CI is set)', () => {
        throw new Error(message);
      });
    });
    return;
  }
  console.warn(`\n\n!!!!!!!!!! SKIPPED: ${message} !!!!!!!!!!\n`);
  describe.skip(name, fn);
}

/** The environment of a gateway on one key store, and what removes that store after. */
export interface StoreBackend {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * Runs `suite` twice: on the embedded PGlite (a fresh cluster) and on PostgreSQL, in a database
 * of its own (see describeWithPostgres for when PostgreSQL does not answer). `suite` gets
 * the backend's factory, to call in its beforeAll.
 */
export function describeOnEachStore(
  title: string,
  label: string,
  suite: (backend: () => Promise<StoreBackend>) => void,
): void {
  describe(`${title}, on PGlite`, () => {
    suite(() => {
      const dir = freshDataDir();
      return Promise.resolve({
        env: { KEY_STORE: 'database', DATA_DIR: dir },
        drop: () => Promise.resolve(removeDataDir(dir)),
      });
    });
  });
  describeWithPostgres(`${title}, on PostgreSQL`, () => {
    suite(async () => {
      const db = await createTestDatabase(label);
      return { env: { KEY_STORE: 'database', DATABASE_URL: db.url }, drop: () => db.drop() };
    });
  });
}

/** A database of its own for one suite run, dropped by `drop()`. */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `gw_test_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const c = new Client({ connectionString: POSTGRES_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Runs one query against `url` and returns its rows. */
export async function query<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

/**
 * A TCP proxy in front of the real PostgreSQL, so a test can make "the database" go away
 * (connections cut, new ones refused) and come back on the same port, without touching
 * the real server.
 */
export class PostgresProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: string) {}

  /** `target` with the proxy's address instead of the server's. */
  get url(): string {
    const url = new URL(this.target);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async start(): Promise<void> {
    const { hostname, port } = new URL(this.target);
    const server = createServer((client) => {
      const upstream = connect(Number(port) || 5432, hostname || '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** The database goes away: open connections are cut and new ones refused. */
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
}
