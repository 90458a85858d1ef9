import OpenAI from 'openai';
import type { GatewayError } from '../src/common/errors/gateway-errors';
import { HealthController } from '../src/health/health.controller';
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
    ).rejects.toThrow();
    await closing;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(pieces.join('')).not.toContain(' p');
  });
});
