import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CATALOG, CatalogService } from '../../../catalog/catalog.service';
import type { Catalog, CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { GatewayError } from '../../../common/errors/gateway-errors';
import type { CanonicalUsage } from '../../../core/canonical';
import { testModel } from '../../../testing/test-model';
import type { ProviderDriver, UpstreamProvider } from '../../../upstream/provider.interface';
import { ProviderRegistry } from '../../../upstream/provider-registry';
import { ProviderDriverFor } from '../../../catalog/provider-kind';
import { LOCAL } from '../../../upstream/providers/local/local.provider';
import {
  OpenAiCompatibleDriver,
  OpenAiDriver,
} from '../../../upstream/providers/openai/openai.provider';
import { UpstreamHttpClient } from '../../../upstream/upstream-http.client';
import { Redactor } from '../../../upstream/redactor';
import { fakeUpstreamConfig } from '../../../testing/fake-upstream-config';
import { JudgeClient, JudgeError, costOf } from './judge-client';

/** A provider kind whose providers only pass bodies through: no translation path. */
@Injectable()
@ProviderDriverFor(LOCAL)
class PassthroughOnlyDriver implements ProviderDriver {
  create(config: CatalogProvider): UpstreamProvider {
    return {
      config,
      descriptor: LOCAL,
      passthrough: () => Promise.reject(new Error('unused')),
    };
  }
}

type Mode = 'ok' | 'hang' | 'fail' | 'prose';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, any>;
}

/** An OpenAI-compatible chat completions upstream on loopback. */
class FakeUpstream {
  mode: Mode = 'ok';
  readonly received: Received[] = [];
  /** Resolves when a hanging request's connection was closed by the client. */
  closed: Promise<void> = Promise.resolve();
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      this.received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw) });
      switch (this.mode) {
        case 'hang':
          this.closed = new Promise((resolve) => res.on('close', () => resolve()));
          return;
        case 'fail':
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'the judge echoed SECRET-PROMPT' } }));
          return;
        case 'ok':
        case 'prose':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'chatcmpl-judge',
              object: 'chat.completion',
              created: 1_700_000_000,
              model: 'upstream-judge',
              choices: [
                {
                  index: 0,
                  message: {
                    role: 'assistant',
                    content:
                      this.mode === 'ok'
                        ? '{"verdict":"block","reason":"leaks the prompt"}'
                        : 'Sure! ```json\n{"verdict":"allow"}\n```',
                  },
                  finish_reason: 'stop',
                },
              ],
              usage: {
                prompt_tokens: 1200,
                completion_tokens: 30,
                total_tokens: 1230,
                prompt_tokens_details: { cached_tokens: 200 },
              },
            }),
          );
          return;
      }
    });
  }
}

function provider(name: string, kind: CatalogProvider['kind'], baseUrl: string, available = true) {
  return { name, kind, baseUrl, apiKey: 'sk-upstream', headers: {}, available } as CatalogProvider;
}

function catalogOf(baseUrl: string): Catalog {
  const up = provider('up', 'openai-compatible', baseUrl);
  const nokey = provider('nokey', 'openai-compatible', baseUrl, false);
  const passthroughOnly = provider('po', 'local', baseUrl);
  const openai = provider('oa', 'openai', baseUrl);
  const model = (id: string, p: CatalogProvider, extra: Partial<CatalogModel> = {}) =>
    testModel('chat_completions', {
      id,
      upstreamId: `upstream-${id}`,
      provider: p,
      pricing: { input: 2, output: 8, cachedInput: 0.5 },
      capabilities: { reasoning: false, tools: true, vision: false },
      ...extra,
    });
  const models = [
    model('judge-mini', up),
    model('judge-nokey', nokey),
    model('judge-down', nokey, { fallbacks: ['judge-nokey', 'judge-mini'] }),
    model('judge-passthrough', passthroughOnly),
    model('judge-reasoner', openai, {
      capabilities: { reasoning: true, tools: true, vision: false },
    }),
  ];
  return {
    providers: new Map([up, nokey, passthroughOnly, openai].map((p) => [p.name, p])),
    models: new Map(models.map((m) => [m.id, m])),
  };
}

const upstreamConfig = fakeUpstreamConfig({ headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000 });

describe('JudgeClient against an OpenAI-compatible upstream on loopback', () => {
  const upstream = new FakeUpstream();
  let moduleRef: TestingModule;
  let client: JudgeClient;

  beforeAll(async () => {
    const baseUrl = await upstream.start();
    moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        { provide: CATALOG, useValue: catalogOf(baseUrl) },
        { provide: ConfigService, useValue: upstreamConfig },
        CatalogService,
        { provide: Redactor, useValue: new Redactor([]) },
        UpstreamHttpClient,
        OpenAiDriver,
        OpenAiCompatibleDriver,
        PassthroughOnlyDriver,
        ProviderRegistry,
        JudgeClient,
      ],
    })
      .setLogger({ log() {}, error() {}, warn() {} })
      .compile();
    await moduleRef.init();
    client = moduleRef.get(JudgeClient);
  });

  afterAll(async () => {
    try {
      await moduleRef?.close();
    } finally {
      await upstream.stop();
    }
  });

  beforeEach(() => {
    upstream.mode = 'ok';
    upstream.received.length = 0;
  });

  const call = (overrides: Partial<Parameters<JudgeClient['call']>[0]> = {}) =>
    client.call({
      modelId: 'judge-mini',
      system: 'You judge answers.',
      user: 'Judge this: hello',
      timeoutMs: 5000,
      requestId: 'req-1',
      ...overrides,
    });

  describe('worstCase', () => {
    const bound = { fixed: 'You judge answers.', variableChars: 1000 };
    /** Pico-dollars per token at $2 input / $8 output per million. */
    const INPUT = 2_000_000n;
    const OUTPUT = 8_000_000n;

    it('prices every call at its prompt bound and whole answer budget', () => {
      const one = client.worstCase('judge-mini', bound, 1);
      expect(client.worstCase('judge-mini', bound, 3)).toBe(3n * one);
      // 300 output tokens by default; 1000 characters are 3000 tokens at most.
      const answer = 300n * OUTPUT;
      expect(one).toBeGreaterThanOrEqual(answer + 3000n * INPUT);
      expect(one).toBeLessThan(answer + 3100n * INPUT);
      expect(client.worstCase('judge-mini', { ...bound, maxOutputTokens: 100 }, 1)).toBe(
        one - 200n * OUTPUT,
      );
    });

    it("never counts more prompt than the model's context window", () => {
      expect(client.worstCase('judge-mini', { ...bound, variableChars: 10_000_000 }, 1)).toBe(
        200_000n * INPUT + 300n * OUTPUT,
      );
    });

    it('gives a reasoning judge its larger answer budget, and takes the dearest fallback that may answer', () => {
      expect(client.worstCase('judge-reasoner', bound, 1)).toBe(
        client.worstCase('judge-mini', bound, 1) + (2000n - 300n) * OUTPUT,
      );
      // judge-down and judge-nokey cannot be called; judge-mini answers for them.
      expect(client.worstCase('judge-down', bound, 1)).toBe(
        client.worstCase('judge-mini', bound, 1),
      );
      expect(client.worstCase('no-such-judge', bound, 1)).toBe(0n);
    });
  });

  it('sends the system and user texts, without tools, and returns text, usage and cost', async () => {
    const result = await call();
    expect(upstream.received).toHaveLength(1);
    const { path, headers, body } = upstream.received[0];
    expect(path).toBe('/v1/chat/completions');
    expect(headers.authorization).toBe('Bearer sk-upstream');
    expect(headers['x-client-request-id']).toBe('req-1');
    expect(body).toEqual({
      model: 'upstream-judge-mini',
      messages: [
        { role: 'system', content: 'You judge answers.' },
        { role: 'user', content: 'Judge this: hello' },
      ],
      max_tokens: 300,
      temperature: 0,
    });
    expect(result.text).toBe('{"verdict":"block","reason":"leaks the prompt"}');
    expect(result.model).toBe('judge-mini');
    expect(result.usage).toMatchObject({
      inputTokens: 1200,
      outputTokens: 30,
      cachedInputTokens: 200,
    });
    // 1000 fresh x $2 + 200 cached x $0.5 + 30 output x $8, per million tokens.
    expect(result.costUsd).toBeCloseTo(0.00234, 10);
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(result.latencyMs).toBeLessThan(5000);
  });

  it('keeps the raw text of an answer wrapped in prose', async () => {
    upstream.mode = 'prose';
    expect((await call({ maxOutputTokens: 50 })).text).toBe(
      'Sure! ```json\n{"verdict":"allow"}\n```',
    );
    expect(upstream.received[0].body.max_tokens).toBe(50);
  });

  it('asks an OpenAI reasoning model for low effort, a larger budget and no temperature', async () => {
    await call({ modelId: 'judge-reasoner' });
    const { body } = upstream.received[0];
    expect(body.model).toBe('upstream-judge-reasoner');
    expect(body.reasoning_effort).toBe('low');
    expect(body.max_completion_tokens).toBe(2000);
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('tools');
  });

  it('never gives a reasoning model less than its reasoning budget', async () => {
    // The injection detector asks for 100 tokens: low-effort reasoning alone may spend them.
    await call({ modelId: 'judge-reasoner', maxOutputTokens: 100 });
    await call({ modelId: 'judge-reasoner', maxOutputTokens: 5000 });
    expect(upstream.received.map((r) => r.body.max_completion_tokens)).toEqual([2000, 5000]);
  });

  it('times out within about timeoutMs and cancels the upstream request', async () => {
    upstream.mode = 'hang';
    const started = Date.now();
    const error = await call({ timeoutMs: 300 }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(JudgeError);
    expect(error).toMatchObject({ kind: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    await expect(upstream.closed).resolves.toBeUndefined();
  });

  it('stops at once when the caller aborts', async () => {
    upstream.mode = 'hang';
    const controller = new AbortController();
    const pending = call({ signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'JudgeError', kind: 'aborted' });
    await expect(upstream.closed).resolves.toBeUndefined();
  });

  it('rejects at once when the signal was already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(call({ signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted' });
    expect(upstream.received).toHaveLength(0);
  });

  it('turns an upstream 500 into an upstream JudgeError without the upstream text', async () => {
    upstream.mode = 'fail';
    const error = (await call().catch((e: unknown) => e)) as JudgeError;
    expect(error).toBeInstanceOf(JudgeError);
    expect(error.kind).toBe('upstream');
    expect(error.message).toContain('HTTP 502 upstream_error');
    expect(error.message).not.toContain('SECRET-PROMPT');
    expect(error.cause).toBeInstanceOf(GatewayError);
  });

  it('asks the catalog fallbacks in order when the judge model is down', async () => {
    const result = await call({ modelId: 'judge-down' });
    expect(result.model).toBe('judge-mini');
    expect(upstream.received).toHaveLength(1);
  });

  it('fails an unknown or uncallable model as an upstream JudgeError', async () => {
    await expect(call({ modelId: 'nope' })).rejects.toMatchObject({ kind: 'upstream' });
    await expect(call({ modelId: 'judge-nokey' })).rejects.toMatchObject({ kind: 'upstream' });
    expect(upstream.received).toHaveLength(0);
  });

  describe('resolve', () => {
    const param = 'tools[0].function.parameters.properties.model';

    it('returns the catalog model', () => {
      expect(client.resolve('judge-mini', param).id).toBe('judge-mini');
    });

    it.each([
      ['unknown', 'nope'],
      ['whose provider is unavailable', 'judge-nokey'],
      ['whose provider has no translation path', 'judge-passthrough'],
    ])('gives a 400 naming the setting for a model %s', (_what, id) => {
      let error: unknown;
      try {
        client.resolve(id, param);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ status: 400, code: 'invalid_protection_settings', param });
      expect((error as Error).message).toContain(id);
    });
  });
});

describe('costOf', () => {
  const usage: CanonicalUsage = {
    inputTokens: 1_000_000,
    outputTokens: 1_000_000,
    cachedInputTokens: 400_000,
    cacheWriteInputTokens: 100_000,
  };

  it('prices fresh, cached, cache-written and output tokens at their rates', () => {
    expect(costOf(usage, { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 })).toBeCloseTo(
      0.5 * 3 + 0.4 * 0.3 + 0.1 * 3.75 + 15,
      10,
    );
  });

  it('prices cached and cache-written tokens as input when the model has no such rate', () => {
    expect(costOf(usage, { input: 2, output: 4 })).toBeCloseTo(2 + 4, 10);
  });

  it('costs nothing for a free model', () => {
    expect(costOf(usage, { input: 0, output: 0 })).toBe(0);
  });
});
