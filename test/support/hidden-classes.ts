/**
 * Run by test/express-adapter.e2e-spec.ts in a child `node --allow-natives-syntax`: serves
 * three held requests through express on GatewayExpressAdapter's server (or Nest's own
 * with `--nest`) and prints whether their req and res objects share hidden classes.
 */
import 'reflect-metadata';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { GatewayExpressAdapter } from '../../src/common/http/express-adapter';

// eslint-disable-next-line @typescript-eslint/no-implied-eval
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

const adapter = process.argv.includes('--nest')
  ? new ExpressAdapter(express())
  : new GatewayExpressAdapter(express());
adapter.initHttpServer({});
const app = adapter.getInstance<express.Express>();
const held: express.Response[] = [];
app.post('/x', (_req, res) => {
  held.push(res);
  res.status(200).type('text/plain');
  res.write('x');
  if (held.length === 3) {
    const req = held.map((r) => r.req);
    process.stdout.write(
      JSON.stringify({
        res: sameMap(held[1], held[2]),
        req: sameMap(req[1], req[2]),
        express: typeof held[0].json === 'function' && held[0].app === app && req[0].app === app,
      }),
    );
    process.exit(0);
  }
});
const server = adapter.getHttpServer() as http.Server;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true });
  for (let i = 0; i < 3; i++) {
    http.request({ port, host: '127.0.0.1', method: 'POST', path: '/x', agent }).end('{}');
  }
});
