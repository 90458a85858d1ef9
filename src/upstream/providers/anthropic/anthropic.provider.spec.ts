import type { CatalogProvider } from '../../../catalog/catalog.types';
import { UpstreamHttpError } from '../../../common/errors/gateway-errors';
import { FlowControl } from '../../../common/sse/flow-control';
import { Readable } from 'node:stream';
import { fakeUpstreamConfig } from '../../../testing/fake-upstream-config';
import type { CallContext } from '../../provider.interface';
import { Redactor } from '../../redactor';
import {
  UpstreamHttpClient,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../../upstream-http.client';
import { AnthropicProvider } from './anthropic.provider';

const CONFIG: CatalogProvider = {
  name: 'anthropic',
  kind: 'anthropic',
  baseUrl: 'https://api.example.com',
  apiKey: 'sk-gateway',
  headers: { 'x-extra': '1' },
  settings: { anthropic_version: '2023-01-01' },
  available: true,
};

/** The real client (caps, checks, redaction) with the network replaced by one answer. */
function fakeHttp(status: number, body: string, headers: Record<string, string> = {}) {
  const sent: UpstreamRequest[] = [];
  const http = new UpstreamHttpClient(fakeUpstreamConfig(), new Redactor(['sk-gateway']));
  http.send = (req: UpstreamRequest) => {
    sent.push(req);
    return Promise.resolve({
      statusCode: status,
      headers,
      body: Readable.from([Buffer.from(body)]),
    } as unknown as UpstreamResponse);
  };
  return { http, sent };
}

function ctx(clientHeaders: CallContext['clientHeaders'] = {}): CallContext {
  const controller = new AbortController();
  return {
    requestId: 'req_1',
    signal: controller.signal,
    abort: () => controller.abort(),
    flow: new FlowControl(),
    clientHeaders,
  };
}

async function failure(p: Promise<unknown>): Promise<UpstreamHttpError> {
  try {
    await p;
  } catch (e) {
    return e as UpstreamHttpError;
  }
  throw new Error('expected a failure');
}

describe('AnthropicProvider', () => {
  it("sends the gateway's key with the client's version and betas, never the client's key", async () => {
    const MESSAGE = '{"id":"msg_1","type":"message","content":[]}';
    const { http, sent } = fakeHttp(200, MESSAGE);
    const provider = new AnthropicProvider(CONFIG, http);
    const result = await provider.passthrough({
      model: {} as never,
      format: 'messages',
      answer: 'messages',
      body: '{"model":"m"}',
      stream: false,
      ctx: ctx({
        'x-api-key': 'client-key',
        authorization: 'Bearer client-key',
        'anthropic-version': '2026-10-21',
        'anthropic-beta': ['a-2025', 'b-2025'],
      }),
    });
    expect(result).toMatchObject({ kind: 'json', status: 200 });
    expect(result.kind === 'json' && result.body.toString()).toBe(MESSAGE);
    expect(sent[0].url).toBe('https://api.example.com/v1/messages');
    expect(sent[0].headers).toEqual({
      'content-type': 'application/json',
      'x-extra': '1',
      'x-api-key': 'sk-gateway',
      'anthropic-version': '2026-10-21',
      'anthropic-beta': 'a-2025,b-2025',
    });
  });

  it('falls back to the configured anthropic-version, then to 2023-06-01', async () => {
    const { http, sent } = fakeHttp(200, '{"input_tokens":3}');
    await new AnthropicProvider(CONFIG, http).postJson('/v1/messages/count_tokens', '{}', ctx());
    await new AnthropicProvider({ ...CONFIG, settings: {} }, http).postJson(
      '/v1/messages/count_tokens',
      '{}',
      ctx(),
    );
    expect(sent.map((r) => r.headers['anthropic-version'])).toEqual(['2023-01-01', '2023-06-01']);
  });

  it('posts any JSON endpoint with postJson and returns its body', async () => {
    const { http, sent } = fakeHttp(200, '{"input_tokens":3}');
    const result = await new AnthropicProvider(CONFIG, http).postJson(
      '/v1/messages/count_tokens',
      '{"model":"m"}',
      ctx(),
    );
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body.toString())).toEqual({ input_tokens: 3 });
    expect(sent[0]).toMatchObject({
      url: 'https://api.example.com/v1/messages/count_tokens',
      method: 'POST',
      body: '{"model":"m"}',
    });
  });

  it('keeps a 529 as an overloaded 529 with its retry hints', async () => {
    const { http } = fakeHttp(
      529,
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      { 'retry-after': '3' },
    );
    const e = await failure(new AnthropicProvider(CONFIG, http).postJson('/v1/x', '{}', ctx()));
    expect(e).toBeInstanceOf(UpstreamHttpError);
    expect(e).toMatchObject({ status: 529, kind: 'overloaded', headers: { 'retry-after': '3' } });
    expect(e.message).toContain('Overloaded');
  });

  it('maps other failures like every provider (5xx become 502)', async () => {
    const { http } = fakeHttp(
      500,
      '{"type":"error","error":{"type":"api_error","message":"boom"}}',
    );
    const e = await failure(new AnthropicProvider(CONFIG, http).postJson('/v1/x', '{}', ctx()));
    expect(e).toMatchObject({ status: 502, kind: 'server' });
  });

  it('never hands back the key an error quotes, on error statuses and 2xx error bodies', async () => {
    const quoting =
      '{"type":"error","error":{"type":"invalid_request_error","message":"key sk-gateway is bad"}}';
    for (const status of [400, 200]) {
      const { http } = fakeHttp(status, quoting);
      const e = await failure(
        new AnthropicProvider(CONFIG, http).postJson('/v1/messages/count_tokens', '{}', ctx()),
      );
      expect(e.status).toBe(400);
      expect(e.message).toBe('key [redacted] is bad');
    }
  });

  it('answers 502 for a 2xx message without content', async () => {
    const { http } = fakeHttp(200, '{}');
    const e = await failure(
      new AnthropicProvider(CONFIG, http).passthrough({
        model: {} as never,
        format: 'messages',
        answer: 'messages',
        body: '{}',
        stream: false,
        ctx: ctx(),
      }),
    );
    expect(e).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(e.message).toContain('content');
  });

  it('refuses to pass through another wire format', async () => {
    const { http, sent } = fakeHttp(200, '{}');
    const call = {
      model: {} as never,
      format: 'responses' as const,
      answer: 'responses' as const,
      body: '{}',
      stream: false,
      ctx: ctx(),
    };
    await expect(new AnthropicProvider(CONFIG, http).passthrough(call)).rejects.toThrow(
      /cannot pass through responses/,
    );
    expect(sent).toHaveLength(0);
  });
});
