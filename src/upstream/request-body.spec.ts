import { createServer, type IncomingMessage, type Server } from 'node:http';
import { request } from 'undici';
import { ONE_SHOT_BODY_BYTES, ownBytes, requestBody } from './request-body';

describe('ownBytes', () => {
  const ownsItsMemory = (b: Buffer): boolean => b.byteLength === b.buffer.byteLength;

  it('turns a string into exactly its UTF-8 bytes, outside the shared pool', () => {
    const bytes = ownBytes('{"model":"m","text":"héllo"}') as Buffer;
    expect(bytes.toString('utf8')).toBe('{"model":"m","text":"héllo"}');
    expect(bytes.byteLength).toBe(Buffer.byteLength('{"model":"m","text":"héllo"}'));
    expect(ownsItsMemory(bytes)).toBe(true);
  });

  it('copies a slice of the shared pool into bytes of its own', () => {
    const pooled = Buffer.from('{"stream":true}');
    expect(ownsItsMemory(pooled)).toBe(false);
    const bytes = ownBytes(pooled) as Buffer;
    expect(bytes).not.toBe(pooled);
    expect(bytes.equals(pooled)).toBe(true);
    expect(ownsItsMemory(bytes)).toBe(true);
  });

  it('passes a buffer that owns its memory, and no body, through unchanged', () => {
    const own = Buffer.allocUnsafeSlow(3).fill(0x61);
    expect(ownBytes(own)).toBe(own);
    expect(ownBytes(undefined)).toBeUndefined();
  });
});

describe('requestBody', () => {
  it('sends a small body as bytes, with the headers as they were', () => {
    const headers = { 'content-type': 'application/json' };
    const out = requestBody('{"model":"m"}', headers);
    expect(Buffer.isBuffer(out.body)).toBe(true);
    expect(out.headers).toBe(headers);
    expect(requestBody(undefined, headers)).toEqual({ body: undefined, headers });
  });

  it('sends a large body as an iterable that yields it once, with its content-length', () => {
    const headers = { 'content-type': 'application/json' };
    const text = `{"system":"${'é'.repeat(ONE_SHOT_BODY_BYTES)}"}`;
    const out = requestBody(text, headers);
    expect(Buffer.isBuffer(out.body)).toBe(false);
    expect(out.headers).toEqual({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    });
    expect(headers).toEqual({ 'content-type': 'application/json' });
    const chunks = [...(out.body as Iterable<Buffer>)];
    expect(Buffer.concat(chunks).toString('utf8')).toBe(text);
    // Forgotten once yielded: nothing is left for the request to keep.
    expect([...(out.body as Iterable<Buffer>)]).toEqual([]);
  });

  describe('through undici, to a server on loopback', () => {
    let server: Server;
    let origin: string;
    const seen: { headers: IncomingMessage['headers']; body: string }[] = [];

    beforeAll(async () => {
      server = createServer((req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c));
        req.on('end', () => {
          seen.push({ headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
          res.end('ok');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it.each([
      ['small', 100],
      ['large', ONE_SHOT_BODY_BYTES * 3],
    ])('a %s body arrives whole, with a content-length and not chunked', async (_, size) => {
      seen.length = 0;
      const text = JSON.stringify({ text: 'x'.repeat(size) });
      const out = requestBody(text, { 'content-type': 'application/json' });
      const res = await request(`${origin}/v1/x`, {
        method: 'POST',
        headers: out.headers,
        body: out.body as Buffer,
      });
      expect(await res.body.text()).toBe('ok');
      expect(seen).toHaveLength(1);
      expect(seen[0].body).toBe(text);
      expect(seen[0].headers['content-length']).toBe(String(text.length));
      expect(seen[0].headers['transfer-encoding']).toBeUndefined();
    });
  });
});
