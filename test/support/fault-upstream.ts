import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SseEvent } from './fake-upstream';
import { REPLIES, type UpstreamKind } from './translation-fixtures';
import { writeCatalog } from './gateway';

/**
 * A real HTTP server on loopback that plays a misbehaving upstream: one fault at a time,
 * rendered in the API the gateway called (Anthropic Messages, OpenAI Chat or Responses).
 * Every error text it writes quotes `quote` (the test puts the gateway's secrets there).
 */

export type Fault =
  /** A 4xx error answer in the API's own envelope. */
  | 'error_400'
  /** A 5xx error answer in the API's own envelope. */
  | 'error_500'
  /** 200 with an error body instead of the answer (or the stream) asked for. */
  | 'ok_with_error'
  /** 200 with `{}`. */
  | 'empty_object'
  /** A healthy stream start, then the API's own in-stream error event. */
  | 'stream_error_event'
  /** A non-streamed answer of `hugeBytes` (chunked, produced lazily). */
  | 'huge_answer'
  /** The same with a content-length header. */
  | 'huge_declared_answer'
  /** A healthy stream start, then one event of `hugeBytes`. */
  | 'huge_event'
  /** A healthy stream start, then `data: {not valid json`. */
  | 'malformed_frame'
  /** Nothing for `silenceMs`, then a healthy answer. */
  | 'silent_then_ok'
  /** Nothing for `silenceMs`, then a 400 quoting `quote`. */
  | 'silent_then_error'
  /** Never answers. */
  | 'hang'
  /** A proxy's plain-text 400 echoing the request headers, the secrets past character 450. */
  | 'proxy_text_400'
  /** A 400 whose `code` is the quoted text. */
  | 'code_quotes'
  /** A healthy stream start, then a chunk whose `error` key is not the first (OpenRouter). */
  | 'late_error_key'
  /** A 200 answer of the right shape that also nests 200,000 levels deep. */
  | 'deep_answer'
  /** A healthy answer. */
  | 'ok'
  /** 429 with `retry-after: 0` and `retry-after-ms: 20`. */
  | 'error_429'
  | 'error_503'
  /** Anthropic's "overloaded". */
  | 'error_529'
  /** The connection dropped before any header. */
  | 'reset_before_headers'
  /** A healthy start (head and first events, or half a JSON body), then the connection dropped. */
  | 'reset_mid_stream'
  /** A healthy stream start, then silence. */
  | 'hang_mid_stream'
  /** 200 JSON cut in the middle (content-length honest about the cut). */
  | 'truncated_json'
  /** 200 with an HTML page (a proxy's error page). */
  | 'html_200';

/** The upstream API a path belongs to, in the catalog of {@link faultCatalog}. */
const API_OF_PATH: Record<string, UpstreamKind | 'count_tokens'> = {
  '/v1/messages': 'anthropic',
  '/v1/messages/count_tokens': 'count_tokens',
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function frame(e: SseEvent): string {
  if (typeof e === 'string') {
    return `data: ${e}\n\n`;
  }
  if (!('data' in e)) {
    return `data: ${JSON.stringify(e)}\n\n`;
  }
  const { event, data } = e;
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return event === undefined ? `data: ${text}\n\n` : `event: ${event}\ndata: ${text}\n\n`;
}

/** The API's error body (Anthropic's envelope for Messages, OpenAI's otherwise). */
function errorBody(api: UpstreamKind | 'count_tokens', type: string, message: string): object {
  return api === 'anthropic' || api === 'count_tokens'
    ? { type: 'error', error: { type, message } }
    : { error: { message, type, param: null, code: null } };
}

/** The API's in-stream error event. */
function errorEvent(api: UpstreamKind, message: string): SseEvent {
  switch (api) {
    case 'anthropic':
      return { event: 'error', data: errorBody(api, 'api_error', message) };
    case 'responses':
      return {
        event: 'error',
        data: { type: 'error', code: 'server_error', message, param: null, sequence_number: 3 },
      };
    case 'chat':
      return errorBody(api, 'server_error', message);
  }
}

export interface FaultRequest {
  path: string;
  stream: boolean;
  /** 'aborted' when the gateway dropped the connection before the answer ended. */
  ended: Promise<'finished' | 'aborted'>;
}

export class FaultUpstream {
  fault: Fault = 'error_400';
  /** Faults for the next requests, one each, before `fault` applies again. */
  script: Fault[] = [];
  /** Text every error the upstream writes quotes. */
  quote = '';
  hugeBytes = 40 * 1024 * 1024;
  silenceMs = 2000;
  readonly requests: FaultRequest[] = [];
  url = '';
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
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
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { stream?: unknown };
    const path = (req.url ?? '').split('?')[0];
    const api = API_OF_PATH[path];
    const stream = body.stream === true;
    let finished = false;
    this.requests.push({
      path,
      stream,
      ended: new Promise((resolve) =>
        res.once('close', () => resolve(finished ? 'finished' : 'aborted')),
      ),
    });
    if (api === undefined) {
      res.writeHead(404).end();
      return;
    }
    await this.answer(api, stream, res);
    finished = res.writableEnded;
  }

  private async answer(
    api: UpstreamKind | 'count_tokens',
    stream: boolean,
    res: ServerResponse,
  ): Promise<void> {
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const healthy = (): void => {
      if (api === 'count_tokens') {
        json(200, { input_tokens: 12 });
        return;
      }
      const reply = REPLIES[api]([{ type: 'text', text: 'Hello there' }], stream);
      if ('json' in reply) {
        json(200, reply.json);
      } else if ('sse' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(reply.sse.map(frame).join(''));
      }
    };
    /** The first events of a healthy stream (up to, not including, its end). */
    const streamStart = (): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const reply = REPLIES[api as UpstreamKind]([{ type: 'text', text: 'Hello there' }], true);
      const events = 'sse' in reply ? reply.sse : [];
      res.write(events.slice(0, 2).map(frame).join(''));
    };
    const message = `Upstream refused: key ${this.quote} is not valid here`;
    const fault = this.script.shift() ?? this.fault;
    switch (fault) {
      case 'ok':
        return healthy();
      case 'error_429':
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': '0',
          'retry-after-ms': '20',
        });
        res.end(JSON.stringify(errorBody(api, 'rate_limit_error', 'slow down')));
        return;
      case 'error_503':
        return json(503, errorBody(api, 'api_error', 'unavailable'));
      case 'error_529':
        return json(529, errorBody(api, 'overloaded_error', 'overloaded'));
      case 'reset_before_headers':
        res.socket?.destroy();
        return;
      case 'reset_mid_stream':
        if (stream && api !== 'count_tokens') {
          streamStart();
        } else {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write('{"id":"x","obj');
        }
        await sleep(20);
        res.socket?.destroy();
        return;
      case 'hang_mid_stream':
        if (stream && api !== 'count_tokens') {
          streamStart();
        } else {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write('{"id":"x"');
        }
        return;
      case 'truncated_json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"x","object":"chat.comp');
        return;
      case 'html_200':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      case 'error_400':
        return json(400, errorBody(api, 'invalid_request_error', message));
      case 'error_500':
        return json(500, errorBody(api, 'api_error', message));
      case 'ok_with_error':
        return json(200, { error: { message } });
      case 'empty_object':
        return json(200, {});
      case 'stream_error_event':
        if (api === 'count_tokens') {
          return json(200, {});
        }
        streamStart();
        res.end(frame(errorEvent(api, message)));
        return;
      case 'huge_answer':
      case 'huge_declared_answer':
        return this.huge(res, fault === 'huge_declared_answer');
      case 'huge_event':
        streamStart();
        await this.writeLazily(res, 'data: {"pad":"', this.hugeBytes);
        if (!res.destroyed) {
          res.end('"}\n\n');
        }
        return;
      case 'malformed_frame':
        streamStart();
        res.end('data: {not valid json\n\n');
        return;
      case 'silent_then_ok':
        await sleep(this.silenceMs);
        return res.destroyed ? undefined : healthy();
      case 'silent_then_error':
        await sleep(this.silenceMs);
        return res.destroyed
          ? undefined
          : json(400, errorBody(api, 'invalid_request_error', message));
      case 'hang':
        return;
      case 'proxy_text_400':
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`${'.'.repeat(451)} x-api-key: ${this.quote}`);
        return;
      case 'code_quotes':
        return json(400, {
          error: { message: 'refused', type: 'invalid_request_error', code: this.quote },
        });
      case 'late_error_key':
        if (api === 'count_tokens') {
          return json(200, {});
        }
        streamStart();
        res.end(
          frame({ id: 'c1', object: 'chat.completion.chunk', choices: [], error: { message } }),
        );
        return;
      case 'deep_answer': {
        const reply =
          api === 'count_tokens' ? undefined : REPLIES[api]([{ type: 'text', text: 'x' }], false);
        const healthyText =
          reply && 'json' in reply ? JSON.stringify(reply.json) : '{"input_tokens":1}';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${healthyText.slice(0, -1)},"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
        return;
      }
    }
  }

  /** A JSON answer of `hugeBytes`, written as fast as the gateway reads it. */
  private async huge(res: ServerResponse, declared: boolean): Promise<void> {
    const head = '{"pad":"';
    const tail = '"}';
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declared ? { 'content-length': String(this.hugeBytes + head.length + tail.length) } : {}),
    });
    await this.writeLazily(res, head, this.hugeBytes);
    if (!res.destroyed) {
      res.end(tail);
    }
  }

  /** `prefix` then `bytes` of padding in 64 KB chunks, honouring backpressure. */
  private async writeLazily(res: ServerResponse, prefix: string, bytes: number): Promise<void> {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    res.write(prefix);
    for (let sent = 0; sent < bytes && !res.destroyed; sent += chunk.length) {
      if (!res.write(chunk)) {
        // Both listeners go once either fires: one pair per wait would pile up on `res`.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            res.off('drain', done).off('close', done);
            resolve();
          };
          res.once('drain', done).once('close', done);
        });
      }
    }
  }
}

/**
 * Models of every upstream API: `claude-f` (Anthropic Messages, with a header the gateway
 * adds from config), `gpt-chat-f` (Chat Completions), `gpt-resp-f` (Responses).
 */
export function faultCatalog(url: string, headerSecret: string): string {
  return writeCatalog(`
providers:
  - name: fault-anthropic
    kind: anthropic
    base_url: ${url}
    api_key_env: FAULT_ANTHROPIC_KEY
    headers: { x-team-token: ${headerSecret} }
  - name: fault-openai
    kind: openai
    base_url: ${url}/v1
    api_key_env: FAULT_OPENAI_KEY
models:
  - { id: claude-f, provider: fault-anthropic, family: anthropic, context_window: 200000, max_output_tokens: 64000, pricing: { input: 3, output: 15 }, capabilities: { reasoning: true, tools: true } }
  - { id: gpt-chat-f, provider: fault-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 }, capabilities: { tools: true } }
  - { id: gpt-resp-f, provider: fault-openai, family: openai, upstream_api: responses, context_window: 400000, max_output_tokens: 128000, pricing: { input: 15, output: 120 }, capabilities: { reasoning: true, tools: true } }
`);
}
