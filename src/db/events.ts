import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { Client, type ClientConfig } from 'pg';

/** Channels the gateway publishes on; payloads are short JSON strings. */
export type DbChannel = 'gw_keys' | 'gw_usage' | 'gw_console' | 'gw_team_budgets';

/**
 * Change notifications between replicas. With PostgreSQL they are `LISTEN/NOTIFY`; with
 * PGlite (one process) they stay in process. A subscriber must also handle `resync`:
 * notifications may have been missed while the listener was disconnected.
 */
export interface DbEvents {
  publish(channel: DbChannel, payload: string): Promise<void>;
  subscribe(channel: DbChannel, handler: (payload: string) => void): void;
  /** Called after the listener reconnected, when notifications may have been lost. */
  onResync(handler: () => void): void;
  close(): Promise<void>;
}

/** In-process events: PGlite serves one process, so nobody else needs to hear them. */
export class LocalEvents implements DbEvents {
  private readonly emitter = new EventEmitter();

  publish(channel: DbChannel, payload: string): Promise<void> {
    // Asynchronous like a real NOTIFY: a publisher never re-enters its subscribers.
    setImmediate(() => this.emitter.emit(channel, payload));
    return Promise.resolve();
  }

  subscribe(channel: DbChannel, handler: (payload: string) => void): void {
    this.emitter.on(channel, handler);
  }

  onResync(): void {
    // never disconnected
  }

  close(): Promise<void> {
    this.emitter.removeAllListeners();
    return Promise.resolve();
  }
}

const CHANNELS: DbChannel[] = ['gw_keys', 'gw_usage', 'gw_console', 'gw_team_budgets'];

/**
 * PostgreSQL `LISTEN` on one dedicated connection, reconnected with backoff when it
 * drops; publishing goes through the pool (`pg_notify`), so it needs no extra connection.
 */
export class PgEvents implements DbEvents {
  private readonly logger = new Logger('DbEvents');
  private readonly emitter = new EventEmitter();
  private readonly resync: (() => void)[] = [];
  private client?: Client;
  private closed = false;
  private retryMs = 100;
  private everConnected = false;

  constructor(
    private readonly config: ClientConfig,
    private readonly notify: (channel: string, payload: string) => Promise<void>,
  ) {}

  /** Connects the listener; resolves after the first attempt whatever its outcome. */
  async start(): Promise<void> {
    await this.connect();
  }

  publish(channel: DbChannel, payload: string): Promise<void> {
    return this.notify(channel, payload);
  }

  subscribe(channel: DbChannel, handler: (payload: string) => void): void {
    this.emitter.on(channel, handler);
  }

  onResync(handler: () => void): void {
    this.resync.push(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) {
      return;
    }
    const client = new Client(this.config);
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.payload !== undefined) {
        this.emitter.emit(n.channel, n.payload);
      }
    });
    try {
      await client.connect();
      for (const channel of CHANNELS) {
        await client.query(`LISTEN ${channel}`);
      }
    } catch (err) {
      this.logger.warn(`cannot listen for changes: ${(err as Error).message}; retrying`);
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.retryLater();
      return;
    }
    this.client = client;
    this.retryMs = 100;
    if (this.everConnected) {
      this.logger.log('change listener reconnected; re-validating cached keys');
      for (const handler of this.resync) {
        handler();
      }
    }
    this.everConnected = true;
  }

  private lost(client: Client): void {
    if (this.client !== client) {
      return;
    }
    this.client = undefined;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (!this.closed) {
      this.logger.warn('change listener disconnected; reconnecting');
      // Whatever changed meanwhile is unknown: treat every cached entry as stale.
      for (const handler of this.resync) {
        handler();
      }
      this.retryLater();
    }
  }

  private retryLater(): void {
    if (this.closed) {
      return;
    }
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 2_000);
    setTimeout(() => void this.connect(), delay).unref();
  }
}
