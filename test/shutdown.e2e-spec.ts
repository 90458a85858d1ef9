import OpenAI from 'openai';
import type { GatewayError } from '../src/common/errors/gateway-errors';
import { HealthController } from '../src/health/health.controller';
import { ShutdownState } from '../src/health/shutdown.state';
import { startGateway, TEST_KEY, testCatalog } from './support/gateway';

describe('graceful shutdown', () => {
  it('lets an in-flight stream finish while refusing readiness, then stops', async () => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      LOCAL_MODEL_TOKEN_DELAY_MS: '25',
      SHUTDOWN_TIMEOUT_MS: '5000',
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const words = Array.from({ length: 16 }, (_, i) => `w${i}`).join(' ');
    const stream = await client.chat.completions.create({
      model: 'local-echo-gpt',
      stream: true,
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: words },
      ],
    });
    const pieces: string[] = [];
    let closing: Promise<void> | undefined;
    let readyDuringDrain: number | undefined;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.delta?.content ?? '');
      if (pieces.length === 3 && !closing) {
        closing = gw.close();
        // New connections are refused by now, so ask the readiness probe's handler directly.
        await new Promise((r) => setTimeout(r, 20));
        const probe = gw.app.get(HealthController);
        readyDuringDrain = (() => {
          try {
            probe.ready();
            return 200;
          } catch (e) {
            return (e as GatewayError).status;
          }
        })();
      }
    }
    expect(pieces.join('')).toBe(`Echo: ${words}`);
    expect(readyDuringDrain).toBe(503);
    await closing;
    await expect(fetch(`${gw.origin}/health`)).rejects.toThrow();
  });

  it('keeps serving for SHUTDOWN_DRAIN_DELAY_MS after SIGTERM while readiness answers 503', async () => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      SHUTDOWN_DRAIN_DELAY_MS: '600',
    });
    const draining = gw.app.get(ShutdownState).startDraining('SIGTERM');
    // New connections, not just kept-alive ones: a load balancer's probe must see the 503.
    const ready = await fetch(`${gw.origin}/health/ready`, { headers: { connection: 'close' } });
    expect(ready.status).toBe(503);
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'local-echo-gpt',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'still here' },
      ],
    });
    expect(answer.choices[0].message.content).toBe('Echo: still here');
    await draining;
    await gw.close();
    await expect(fetch(`${gw.origin}/health`)).rejects.toThrow();
  });

  it("ends streams open at SHUTDOWN_TIMEOUT_MS with their format's error event, and logs each", async () => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      LOCAL_MODEL_TOKEN_DELAY_MS: '200',
      SHUTDOWN_TIMEOUT_MS: '400',
    });
    const headers = {
      authorization: `Bearer ${TEST_KEY}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    };
    const words = 'a b c d e f g h i j k l m n o p';
    const requests = [
      [
        '/v1/chat/completions',
        {
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: words },
          ],
        },
      ],
      ['/v1/responses', { instructions: 's', input: words }],
      [
        '/v1/messages',
        { system: 's', max_tokens: 100, messages: [{ role: 'user', content: words }] },
      ],
    ] as const;
    const responses = await Promise.all(
      Array.from({ length: 18 }, (_, i) => {
        const [path, body] = requests[i % 3];
        const model = path === '/v1/messages' ? 'local-echo-claude' : 'local-echo-gpt';
        return fetch(gw.origin + path, {
          method: 'POST',
          headers,
          body: JSON.stringify({ ...body, model, stream: true }),
        }).then((res) => ({ path, res }));
      }),
    );
    // Every stream has its 200 head; the local model needs ~3 s per answer, the deadline is 0.4 s.
    const closing = gw.close();
    const bodies = await Promise.all(
      responses.map(async ({ path, res }) => ({
        path,
        status: res.status,
        text: await res.text(),
      })),
    );
    await closing;
    for (const { path, status, text } of bodies) {
      expect(status).toBe(200);
      const frames = text.split('\n\n').filter((f) => f.includes('data: '));
      const last = frames[frames.length - 1];
      if (path === '/v1/messages') {
        expect(last).toMatch(/^event: error\ndata: /);
        expect(JSON.parse(last.split('data: ')[1])).toMatchObject({
          type: 'error',
          error: { type: 'api_error' },
        });
      } else if (path === '/v1/responses') {
        expect(last).toMatch(/^event: (error|response\.failed)\n/);
      } else {
        expect(JSON.parse(last.slice('data: '.length))).toMatchObject({
          error: { code: 'server_shutting_down' },
        });
      }
      expect(text).not.toContain('Echo: a b c d e f g h i j k l m n o p');
    }
    const lines = gw.logs.filter((l) => l.msg === 'request' && l.stream === true);
    expect(lines).toHaveLength(18);
    for (const line of lines) {
      expect(line).toMatchObject({ status: 200, errorCode: 'server_shutting_down' });
    }
  });

  it('cuts streams that outlive SHUTDOWN_TIMEOUT_MS', async () => {
    const gw = await startGateway({
      CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
      LOCAL_MODEL_TOKEN_DELAY_MS: '200',
      SHUTDOWN_TIMEOUT_MS: '300',
    });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'local-echo-gpt',
      stream: true,
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'a b c d e f g h i j k l m n o p' },
      ],
    });
    const started = Date.now();
    const closing = gw.close();
    const pieces: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) {
          pieces.push(chunk.choices[0]?.delta?.content ?? '');
        }
      })(),
    ).rejects.toThrow(/shutting down/);
    await closing;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(pieces.join('')).not.toContain(' p');
  });
});
