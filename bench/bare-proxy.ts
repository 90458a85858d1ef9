/**
 * The floor the gateway is compared with: a bare `node:http` + undici proxy doing
 * the same checks as the gateway's chat fast path (a bearer key, a known model, a system
 * prompt) and relaying the upstream's answer byte for byte, with the provider key swapped
 * in. No framework, no logging, no validation beyond those checks: what Node itself costs.
 * Run as a child process (`--upstream=<origin>`); it tells its parent its port over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

const UPSTREAM_AUTH = 'Bearer sk-bench-upstream';
const MODELS = new Set(['bench-model']);

function reject(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
}

export function startBareProxy(upstream: string, key: string): Promise<number> {
  const expected = `Bearer ${key}`;
  const dispatcher = new Agent({ keepAliveTimeout: 120_000, pipelining: 1 });
  const target = `${upstream}/v1/chat/completions`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== expected) {
      return reject(res, 401, 'bad key');
    }
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      let body: { model?: unknown; messages?: { role?: unknown }[] };
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return reject(res, 400, 'bad json');
      }
      if (typeof body.model !== 'string' || !MODELS.has(body.model)) {
        return reject(res, 404, 'unknown model');
      }
      if (!Array.isArray(body.messages) || body.messages[0]?.role !== 'system') {
        return reject(res, 400, 'system prompt required');
      }
      request(target, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', authorization: UPSTREAM_AUTH },
        body: raw,
      }).then(
        (up) => {
          res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type']) });
          up.body.on('data', (c: Buffer) => res.write(c));
          up.body.on('end', () => res.end());
          up.body.on('error', () => res.destroy());
        },
        () => reject(res, 502, 'upstream failed'),
      );
    });
  });
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

if (require.main === module) {
  const arg = (name: string): string | undefined =>
    process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  void startBareProxy(arg('upstream') ?? 'http://127.0.0.1:8080', arg('key') ?? 'bench-key').then(
    (port) => process.send?.({ type: 'listening', port }),
  );
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}
