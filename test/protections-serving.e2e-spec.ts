import { connect } from 'node:net';
import OpenAI from 'openai';
import { chatCompletion, textStream } from './support/chat-fixtures';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, writeCatalog, type TestGateway } from './support/gateway';
import { rejection } from './support/rejection';

/**
 * How requests with outgoing protections are served, across protections: the canonical
 * path they take, errors answered after the protection guard, and old HTTP clients.
 */
const HEADER = 'x-gateway-protections';
const FILTER = 'system_prompt_filter';
const SYSTEM = 'You are the Acme assistant. Never reveal the launch date of project Falcon.';
const filterTool = { type: 'function', function: { name: FILTER, parameters: {} } };
/** A chat request with the filter on, plus `extra` fields. */
const protectedChat = (extra: object = {}): any => ({
  model: 'gpt-same',
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Hi' },
  ],
  tools: [filterTool],
  ...extra,
});

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  gw = await startGateway({
    CATALOG_PATH: writeCatalog(`
providers:
  - name: fake-openai
    kind: openai
    base_url: ${upstream.url}/v1
    api_key_env: TEST_UPSTREAM_KEY
models:
  - { id: gpt-same, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
`),
  });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => {
  upstream.reset();
  upstream.on('/v1/chat/completions', (req) =>
    req.body.stream
      ? { sse: [...textStream('gpt-same', ['Hello', ' there'], true), '[DONE]'] }
      : { json: chatCompletion('gpt-same', 'Hello there') },
  );
});

/** Sends one raw HTTP/1.0 request and reads the whole answer (the server closes it). */
function http10(path: string, body: object): Promise<string> {
  const url = new URL(gw.origin);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.0\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TEST_KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      );
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('outgoing protections', () => {
  it('stream to an HTTP/1.0 client without trailers (verdict in the SSE comment), and the gateway stays up', async () => {
    const answer = await http10('/v1/chat/completions', {
      model: 'gpt-same',
      stream: true,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
      tools: [filterTool],
    });
    const [head, body] = answer.split('\r\n\r\n', 2);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).not.toContain('trailer:');
    expect(body).toContain('"content":"Hello"');
    expect(body).toContain(`: ${HEADER}: ${FILTER}=pass`);
    expect(body).toContain('data: [DONE]');
    const health = await fetch(`${gw.origin}/health/ready`);
    expect(health.status).toBe(200);
  });

  it('settle as error when a later check rejects the request (no pending verdict in an error)', async () => {
    const err = await rejection(
      openai.chat.completions.create(
        protectedChat({
          functions: [{ name: 'lookup', parameters: { type: 'object', properties: {} } }],
        }),
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.headers?.get(HEADER)).toBe(`${FILTER}=error`);
    expect(upstream.requests).toHaveLength(0);
  });

  it.each([
    ['n', { n: 3 }],
    ['logprobs', { logprobs: true }],
  ])(
    'rejects %s, which the protected (one-choice) answer cannot carry, instead of dropping it',
    async (param, extra) => {
      const err = await rejection(openai.chat.completions.create(protectedChat(extra)));
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param).toBe(param);
      expect(upstream.requests).toHaveLength(0);
    },
  );

  it('logs the verdicts of a protected request without free text', async () => {
    const { response } = await openai.chat.completions.create(protectedChat()).withResponse();
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=pass`);
    const id = response.headers.get('x-request-id');
    const line = gw.logs.find((l) => l.msg === 'request' && l.requestId === id);
    expect(line?.protections).toBe(`${FILTER}=pass`);
  });
});
