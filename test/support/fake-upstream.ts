import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake upstream received, with how it ended. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The request target as sent, query string included. */
  url: string;
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
  /** Resolves with 'aborted' when the gateway closed the connection before we finished. */
  ended: Promise<'finished' | 'aborted'>;
}

/** A string is sent as `data:` verbatim; `{event?, data}` as an event; any other object as JSON data. */
export type SseEvent = string | { event?: string; data: string | object } | object;

/** What the fake upstream answers. */
export type Reply =
  | { status?: number; json: unknown; headers?: Record<string, string>; delayMs?: number }
  | {
      status?: number;
      sse: SseEvent[];
      headers?: Record<string, string>;
      /** Delay before each event. */
      intervalMs?: number;
      delayMs?: number;
      /** After the events: keep the connection open, or cut it without ending the body. */
      after?: 'end' | 'hold' | 'destroy';
    }
  | { text: string; status: number; headers?: Record<string, string> }
  | { hang: true }
  | { destroy: true };

export type Handler = (req: RecordedRequest) => Reply | Promise<Reply>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function frame(e: SseEvent): string {
  if (typeof e === 'string') {
    return e.startsWith(':') ? `${e}\n\n` : `data: ${e}\n\n`;
  }
  if (!('data' in e)) {
    return `data: ${JSON.stringify(e)}\n\n`;
  }
  const { event, data } = e;
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return event === undefined ? `data: ${text}\n\n` : `event: ${event}\ndata: ${text}\n\n`;
}

/**
 * A real HTTP server on loopback playing an upstream provider. Tests set a handler per
 * path and inspect the recorded requests (headers, parsed body, whether they were cut).
 */
export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly handlers = new Map<string, Handler>();
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Sets the handler for a path (exact match, query ignored). */
  on(path: string, handler: Handler): this {
    this.handlers.set(path, handler);
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.handlers.clear();
  }

  last(): RecordedRequest {
    const r = this.requests[this.requests.length - 1];
    if (!r) {
      throw new Error('the fake upstream received no request');
    }
    return r;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    let finished = false;
    const ended = new Promise<'finished' | 'aborted'>((resolve) => {
      res.once('close', () => resolve(finished ? 'finished' : 'aborted'));
    });
    const path = (req.url ?? '').split('?')[0];
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path,
      url: req.url ?? '',
      headers: req.headers,
      raw,
      body,
      ended,
    };
    this.requests.push(recorded);
    const handler = this.handlers.get(path);
    if (!handler) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: `fake upstream: no handler for ${path}`,
            type: 'invalid_request_error',
          },
        }),
      );
      finished = true;
      return;
    }
    const reply = await handler(recorded);
    if ('hang' in reply) {
      return;
    }
    if ('destroy' in reply) {
      req.socket.destroy();
      return;
    }
    if ('text' in reply) {
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
      res.end(reply.text);
      finished = true;
      return;
    }
    if (reply.delayMs) {
      await sleep(reply.delayMs);
    }
    if ('json' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.json));
      finished = true;
      return;
    }
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...reply.headers });
    for (const event of reply.sse) {
      if (reply.intervalMs) {
        await sleep(reply.intervalMs);
      }
      if (res.destroyed) {
        return;
      }
      res.write(frame(event));
    }
    if (reply.after === 'destroy') {
      // Let the bytes already written reach the gateway first, as a mid-stream crash would.
      await sleep(50);
      req.socket.destroy();
      return;
    }
    if (reply.after === 'hold') {
      return;
    }
    finished = true;
    res.end();
  }
}
