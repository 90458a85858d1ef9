import { createServer, type Server } from 'node:http';
import { firstValueFrom, toArray } from 'rxjs';
import type { CanonicalEvent } from '../core/canonical';
import { fakeUpstreamConfig } from '../testing/fake-upstream-config';
import { canonicalCall } from './canonical-call';
import type { CallContext } from './provider.interface';
import { Redactor } from './redactor';
import { UpstreamHttpClient } from './upstream-http.client';

describe('canonicalCall', () => {
  let server: Server;
  let origin: string;
  let client: UpstreamHttpClient;
  const received: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ answer: 'hi' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    client = new UpstreamHttpClient(fakeUpstreamConfig({}), new Redactor([]));
  });
  afterAll(async () => {
    await client.onApplicationShutdown();
    server.close();
  });

  const ctx = {
    requestId: 'req_1',
    signal: new AbortController().signal,
  } as unknown as CallContext;
  const stop = { type: 'message_stop' } as unknown as CanonicalEvent;

  it('sends its payload on subscription, once; a second subscription fails instead of sending again', async () => {
    received.length = 0;
    const events = canonicalCall({
      http: client,
      framing: 'sse',
      payload: '{"model":"m","messages":[]}',
      send: (payload) =>
        client.sendOk(
          { url: `${origin}/v1/x`, method: 'POST', headers: {}, body: payload, signal: ctx.signal },
          'fake',
        ),
      stream: false,
      ctx,
      providerName: 'fake',
      answer: (value) => (value.answer === 'hi' ? undefined : 'answer'),
      fromJson: () => [stop],
      decoder: () => ({ push: () => [], end: () => [] }),
    });
    expect(received).toEqual([]);
    await expect(firstValueFrom(events.pipe(toArray()))).resolves.toEqual([stop]);
    expect(received).toEqual(['{"model":"m","messages":[]}']);
    await expect(firstValueFrom(events)).rejects.toThrow('an upstream call is sent once');
    expect(received).toHaveLength(1);
  });
});
