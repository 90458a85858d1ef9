import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { chatCompletion, textStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { MAIN_JS } from './support/global-setup';
import { TEST_KEY, testCatalog } from './support/gateway';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { post as httpPost } from './support/http';

const SECRET_PROMPT = 'the quarterly numbers are 1234 and confidential';
const SYSTEM = { role: 'system', content: 'You are terse.' };
const SERVER = 2;
const CLIENT = 3;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The gateway as its own process (dist/main.js): the OTLP exporter loads its HTTP module
 * with a dynamic import, which Jest's module sandbox cannot run, and this is how it runs
 * in production anyway.
 */
async function startProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN_JS], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes('gateway listening')) {
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gateway exited (${code}):\n${output}`)));
  });
  return { child, origin: `http://127.0.0.1:${port}` };
}

describe('OpenTelemetry traces exported over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let upstream: FakeUpstream;
  let gw: { child: ChildProcess; origin: string; baseURL: string };

  beforeAll(async () => {
    receiver = await new OtlpReceiver().start();
    upstream = await new FakeUpstream().start();
    const started = await startProcess({
      CATALOG_PATH: testCatalog(upstream.url),
      GATEWAY_API_KEYS: TEST_KEY,
      TEST_UPSTREAM_KEY: 'sk-upstream-secret',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'gateway-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    gw = { ...started, baseURL: `${started.origin}/v1` };
  }, 90_000);
  afterAll(async () => {
    if (gw?.child.exitCode === null) {
      const exited = new Promise((resolve) => gw.child.once('exit', resolve));
      gw.child.kill('SIGINT');
      await exited;
    }
    await upstream.stop();
    await receiver.stop();
  });

  const post = (body: object, headers: Record<string, string> = {}): Promise<Response> =>
    httpPost(gw.origin, '/v1/chat/completions', body, headers);

  /** The spans of one trace once the batch processor has exported `count` of them. */
  const spansOf = async (traceId: string, count = 1): Promise<ReceivedSpan[]> => {
    for (let i = 0; i < 100; i++) {
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
      if (spans.length >= count && spans.some((s) => s.kind === SERVER)) {
        return spans;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return receiver.spans.filter((s) => s.traceId === traceId);
  };

  it('continues the client trace, spans the steps, propagates traceparent upstream, and carries no content', async () => {
    upstream.on('/v1/chat/completions', () => ({ json: chatCompletion('upstream-gpt-1', 'Hi') }));
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const res = await post(
      {
        model: 'test-gpt',
        messages: [SYSTEM, { role: 'user', content: SECRET_PROMPT }],
        // A protection, so that its check gets a span too.
        tools: [
          {
            type: 'function',
            function: {
              name: 'prompt_injection_protection',
              parameters: { type: 'object', properties: {} },
            },
          },
        ],
      },
      { traceparent: `00-${traceId}-${clientSpan}-01` },
    );
    expect(res.status).toBe(200);
    await res.text();
    const spans = await spansOf(traceId, 5);

    const server = spans.find((s) => s.kind === SERVER);
    expect(server).toBeDefined();
    expect(server?.name).toBe('POST /v1/chat/completions');
    expect(server?.parentSpanId).toBe(clientSpan);
    expect(server?.resource['service.name']).toBe('gateway-under-test');
    expect(server?.attributes).toMatchObject({
      'gateway.request_id': res.headers.get('x-request-id'),
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'test-gpt',
      'gen_ai.response.model': 'upstream-gpt-1',
      'gen_ai.provider.name': 'fake-openai',
    });
    expect(server?.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(server?.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);

    const children = spans.filter((s) => s.parentSpanId === server?.spanId).map((s) => s.name);
    expect(children).toEqual(
      expect.arrayContaining([
        'gateway.auth',
        'gateway.admission',
        'gateway.protections',
        'gateway.limits',
        'upstream POST',
      ]),
    );
    const call = spans.find((s) => s.kind === CLIENT);
    expect(call?.events).toContain('http.first_byte');
    expect(call?.attributes['http.response.status_code']).toBe(200);

    // The upstream saw the same trace, with the CLIENT span as its parent.
    expect(upstream.last().headers.traceparent).toBe(`00-${traceId}-${call?.spanId}-01`);
    for (const body of receiver.bodies) {
      expect(body).not.toContain('quarterly');
    }
  });

  it('spans the encoder on the translated path, streamed or not', async () => {
    for (const stream of [false, true]) {
      const traceId = randomBytes(16).toString('hex');
      const res = await post(
        // A Claude-family local model on chat completions: decoded, served, re-encoded.
        { model: 'local-echo-claude', stream, messages: [SYSTEM, { role: 'user', content: 'x' }] },
        { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      );
      expect(res.status).toBe(200);
      await res.text();
      const spans = await spansOf(traceId, 4);
      const server = spans.find((s) => s.kind === SERVER);
      const children = spans.filter((s) => s.parentSpanId === server?.spanId).map((s) => s.name);
      expect(children).toContain('gateway.encode');
    }
  });

  it('marks the first token of a stream and a refused request as an error', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: [...textStream('upstream-gpt-1', ['a', 'b'], true), '[DONE]'],
    }));
    const traceId = randomBytes(16).toString('hex');
    const res = await post(
      { model: 'test-gpt', stream: true, messages: [SYSTEM, { role: 'user', content: 'x' }] },
      { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    );
    await res.text();
    const server = (await spansOf(traceId)).find((s) => s.kind === SERVER);
    expect(server?.events).toContain('gen_ai.first_token');
    expect(server?.attributes['gateway.stream']).toBe(true);

    const badTrace = randomBytes(16).toString('hex');
    const bad = await post(
      { model: 'no-such-model', messages: [SYSTEM, { role: 'user', content: 'x' }] },
      { traceparent: `00-${badTrace}-${randomBytes(8).toString('hex')}-01` },
    );
    expect(bad.status).toBe(404);
    const failed = (await spansOf(badTrace)).find((s) => s.kind === SERVER);
    expect(failed?.status?.code).toBe(2);
    expect(failed?.attributes['error.type']).toBe('model_not_found');
  });

  it('starts a new trace when the client sends none', async () => {
    const res = await fetch(`${gw.origin}/health`);
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    let span: ReceivedSpan | undefined;
    for (let i = 0; i < 100 && span === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      span = receiver.spans.find((s) => s.attributes['gateway.request_id'] === id);
    }
    expect(span?.name).toBe('GET /health');
    expect(span?.parentSpanId).toBeUndefined();
    expect(span?.attributes['gateway.request_id']).toBe(res.headers.get('x-request-id'));
  });
});
