import { EventEmitter } from 'node:events';
import type { ExecutionContext } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { ApiKeyService } from '../auth/api-key.service';
import type { ApiKeyInfo } from '../common/key-policy';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import {
  ContextLengthExceededError,
  InvalidRequestError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
} from '../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { AllConfig, LimitsConfig } from '../config';
import type { RateLimits } from '../config/limits.config';
import { chatLimitFacts } from '../formats/chat-completions/chat.limits';
import { messagesLimitFacts } from '../formats/messages/messages.limits';
import { LimitsHealth } from './limits-health';
import { ADMITTED, type Admission, LimitsService } from './limits.service';
import { MemoryRateLimitStore } from './rate/memory.store';
import type { RateLimitStore } from './rate/rate-limit.store';
import { RequestLimits, RequestLimitsGuard, requestLimitsOf } from './request-limits.guard';
import { thrown } from '../testing/thrown';

const MODEL = {
  id: 'm',
  family: 'openai',
  contextWindow: 4000,
  maxOutputTokens: 1000,
  provider: { available: true },
} as CatalogModel;
const CATALOG = new CatalogService({ providers: new Map(), models: new Map([['m', MODEL]]) });

function config(
  defaults: Partial<RateLimits>,
  over: Partial<LimitsConfig> = {},
): ConfigService<AllConfig, true> {
  const limits: LimitsConfig = {
    defaults: { requestsPerMinute: 0, tokensPerMinute: 0, maxConcurrentStreams: 0, ...defaults },
    defaultOutputTokens: 100,
    failMode: 'open',
    redisKeyPrefix: 't:',
    redisCommandTimeoutMs: 100,
    maxMessages: 10,
    maxTools: 10,
    maxContentParts: 10,
    ...over,
  };
  return { get: () => limits } as unknown as ConfigService<AllConfig, true>;
}

function keys(info?: Partial<ApiKeyInfo>): ApiKeyService {
  return {
    info: () => (info ? { id: 'key1', limits: {}, modelLimits: new Map(), ...info } : undefined),
    anyLimit: () => false,
  } as unknown as ApiKeyService;
}

class FakeResponse extends EventEmitter {
  statusCode = 200;
  closed = false;
  headers: Record<string, string> = {};
  setHeader(name: string, value: string): void {
    this.headers[name] = value;
  }
}

function call(path = '/v1/chat/completions', keyId: string | null = 'key1') {
  const ctx = { requestId: 'r1', startedAt: 0n, keyId: keyId ?? undefined };
  const req = { path, ctx } as unknown as GatewayRequest;
  const res = new FakeResponse();
  return { req, res, gw: res as unknown as GatewayResponse };
}

const chat = (over: Record<string, unknown> = {}) =>
  chatLimitFacts({
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello' },
    ],
    ...over,
  });

/** The in-memory store decides synchronously: no promise, no await on the hot path. */
function decided(result: Admission | Promise<Admission>): Admission {
  if (result instanceof Promise) {
    throw new Error('expected a synchronous decision');
  }
  return result;
}

describe('LimitsService', () => {
  let store: MemoryRateLimitStore;
  let health: LimitsHealth;

  beforeEach(() => {
    store = new MemoryRateLimitStore();
    health = new LimitsHealth();
  });
  afterEach(() => store.close());

  const service = (
    defaults: Partial<RateLimits>,
    info?: Partial<ApiKeyInfo>,
    over?: Partial<LimitsConfig>,
    s: RateLimitStore = store,
  ) => new LimitsService(config(defaults, over), CATALOG, keys(info), s, health);

  it('admits synchronously on the in-memory store, with OpenAI headers on OpenAI paths', () => {
    const { req, res, gw } = call();
    const result = service({ requestsPerMinute: 2 }).admit(chat(), req, gw);
    expect(result).toBe(ADMITTED);
    expect(res.headers).toEqual({
      'x-ratelimit-limit-requests': '2',
      'x-ratelimit-remaining-requests': '1',
      'x-ratelimit-reset-requests': '30s',
    });
  });

  it('uses the Anthropic header names on /v1/messages', () => {
    const { req, res, gw } = call('/v1/messages');
    const facts = messagesLimitFacts({
      model: 'm',
      max_tokens: 10,
      system: 's',
      messages: [{ role: 'user', content: 'hi' }],
    });
    decided(service({ requestsPerMinute: 2 }).admit(facts, req, gw));
    expect(Object.keys(res.headers)).toEqual([
      'anthropic-ratelimit-requests-limit',
      'anthropic-ratelimit-requests-remaining',
      'anthropic-ratelimit-requests-reset',
    ]);
  });

  it('refuses over the limit with a 429 that carries retry-after and the headers', () => {
    const limits = service({ requestsPerMinute: 1 });
    decided(limits.admit(chat(), call().req, call().gw));
    const { req, res, gw } = call();
    const err = thrown(() => limits.admit(chat(), req, gw));
    expect(err).toBeInstanceOf(RateLimitExceededError);
    expect(err).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': '60' },
    });
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('checks request limits first: an invalid request takes no quota', () => {
    const limits = service({ requestsPerMinute: 1 });
    expect(
      thrown(() => limits.admit(chat({ max_tokens: 5000 }), call().req, call().gw)),
    ).toBeInstanceOf(InvalidRequestError);
    expect(limits.admit(chat(), call().req, call().gw)).toBe(ADMITTED);
  });

  it('rejects a prompt that cannot fit the context window with context_length_exceeded', () => {
    const long = chat({ messages: [{ role: 'user', content: 'word '.repeat(5000) }] });
    expect(thrown(() => service({}).admit(long, call().req, call().gw))).toBeInstanceOf(
      ContextLengthExceededError,
    );
  });

  it('reserves prompt plus output tokens, then corrects to the real usage when the response closes', () => {
    const limits = service({ tokensPerMinute: 10_000 });
    const first = call();
    decided(limits.admit(chat({ max_tokens: 1000 }), first.req, first.gw));
    const reserved = 10_000 - Number(first.res.headers['x-ratelimit-remaining-tokens']);
    expect(reserved).toBeGreaterThan(1000);
    first.req.ctx.usage = { inputTokens: 20, outputTokens: 5 };
    first.res.emit('close');
    const second = call();
    decided(limits.admit(chat({ max_tokens: 1000 }), second.req, second.gw));
    // The bucket refills one token per 6 ms of wall time: a slow machine may add a few.
    const remaining = Number(second.res.headers['x-ratelimit-remaining-tokens']);
    expect(remaining).toBeGreaterThanOrEqual(10_000 - 25 - reserved);
    expect(remaining).toBeLessThanOrEqual(10_000 - 25 - reserved + 10);
  });

  it('gives the whole reservation back when the request failed without usage', () => {
    const limits = service({ tokensPerMinute: 10_000 });
    const first = call();
    decided(limits.admit(chat({ max_tokens: 1000 }), first.req, first.gw));
    first.res.statusCode = 502;
    first.res.emit('close');
    const second = call();
    decided(limits.admit(chat({ max_tokens: 1000 }), second.req, second.gw));
    const reserved = 10_000 - Number(first.res.headers['x-ratelimit-remaining-tokens']);
    // Wall-time refill may add a few tokens on a slow machine (see above).
    const remaining = Number(second.res.headers['x-ratelimit-remaining-tokens']);
    expect(remaining).toBeGreaterThanOrEqual(10_000 - reserved);
    expect(remaining).toBeLessThanOrEqual(10_000 - reserved + 10);
  });

  it('reserves the default output when the request sets no cap', () => {
    const { req, res, gw } = call();
    decided(service({ tokensPerMinute: 10_000 }).admit(chat(), req, gw));
    const reserved = 10_000 - Number(res.headers['x-ratelimit-remaining-tokens']);
    expect(reserved).toBeGreaterThan(100);
    expect(reserved).toBeLessThan(130);
  });

  it('answers a request larger than the token budget with 429 and x-should-retry: false', () => {
    const err = thrown(() =>
      service({ tokensPerMinute: 500 }).admit(chat({ max_tokens: 1000 }), call().req, call().gw),
    );
    expect(err).toMatchObject({ status: 429, headers: { 'x-should-retry': 'false' } });
    expect((err as Error).message).toMatch(/Request too large for tokens per minute/);
  });

  it('holds a stream slot until the response closes', () => {
    const limits = service({ maxConcurrentStreams: 1 });
    const first = call();
    decided(limits.admit(chat({ stream: true }), first.req, first.gw));
    expect(thrown(() => limits.admit(chat({ stream: true }), call().req, call().gw))).toMatchObject(
      {
        status: 429,
        message: expect.stringContaining('concurrent streams'),
      },
    );
    expect(limits.admit(chat(), call().req, call().gw)).toBe(ADMITTED);
    first.res.emit('close');
    expect(limits.admit(chat({ stream: true }), call().req, call().gw)).toBe(ADMITTED);
  });

  it('frees the stream slot at once when the client hung up before the decision', () => {
    const limits = service({ maxConcurrentStreams: 1 });
    const gone = call();
    gone.res.closed = true;
    decided(limits.admit(chat({ stream: true }), gone.req, gone.gw));
    expect(decided(limits.admit(chat({ stream: true }), call().req, call().gw))).toBe(ADMITTED);
  });

  it('applies per-key overrides and per-model limits from the keys file', () => {
    const limits = service(
      { requestsPerMinute: 100 },
      {
        limits: { requestsPerMinute: 50 },
        modelLimits: new Map([['m', { requestsPerMinute: 1 }]]),
      },
    );
    const { req, res, gw } = call();
    decided(limits.admit(chat(), req, gw));
    expect(res.headers['x-ratelimit-limit-requests']).toBe('1');
    expect(thrown(() => limits.admit(chat(), call().req, call().gw))).toMatchObject({
      message: expect.stringContaining('for this model'),
    });
  });

  it('touches no counter and sends no header when no limit applies', () => {
    const { req, res, gw } = call();
    expect(service({}).admit(chat(), req, gw)).toBe(ADMITTED);
    expect(res.headers).toEqual({});
    expect(store.size).toBe(0);
  });

  it('skips rate limits for a request without a key id', () => {
    const { req, res, gw } = call('/v1/chat/completions', null);
    expect(service({ requestsPerMinute: 1 }).admit(chat(), req, gw)).toBe(ADMITTED);
    expect(res.headers).toEqual({});
  });

  describe('when the store fails', () => {
    const broken = {
      kind: 'redis',
      acquire: () => Promise.reject(new Error('Connection is closed.')),
    } as unknown as RateLimitStore;

    it('fails open: lets the request through and counts it', async () => {
      await expect(
        service({ requestsPerMinute: 1 }, undefined, {}, broken).admit(
          chat(),
          call().req,
          call().gw,
        ),
      ).resolves.toBe(ADMITTED);
      expect(health.snapshot()).toMatchObject({ failedOpen: 1, failedClosed: 0, storeErrors: 1 });
      expect(health.snapshot().lastError?.message).toBe('Connection is closed.');
    });

    it('fails closed: refuses with 503 rate_limiter_unavailable', async () => {
      const limits = service({ requestsPerMinute: 1 }, undefined, { failMode: 'closed' }, broken);
      await expect(limits.admit(chat(), call().req, call().gw)).rejects.toBeInstanceOf(
        RateLimiterUnavailableError,
      );
      expect(health.snapshot()).toMatchObject({ failedOpen: 0, failedClosed: 1 });
    });
  });
});

describe('RequestLimitsGuard', () => {
  class Routes {
    @RequestLimits(chatLimitFacts)
    limited(): void {}
    free(): void {}
  }

  function context(handler: keyof Routes, body: unknown): ExecutionContext {
    return {
      getHandler: () => Routes.prototype[handler],
      switchToHttp: () => ({
        getRequest: () => ({ body, path: '/v1/chat/completions', ctx: { keyId: 'k' } }),
        getResponse: () => ({ setHeader: jest.fn(), once: jest.fn() }),
      }),
    } as unknown as ExecutionContext;
  }

  it('runs the declared extractor and hands its facts to the limits service', () => {
    const admit = jest.fn(() => true as const);
    const guard = new RequestLimitsGuard(new Reflector(), { admit } as unknown as LimitsService);
    expect(guard.canActivate(context('limited', { model: 'm', messages: [{}, {}] }))).toBe(true);
    expect(admit).toHaveBeenCalledWith(
      expect.objectContaining({ model: 'm', messageCount: 2 }),
      expect.anything(),
      expect.anything(),
    );
    expect(requestLimitsOf(Routes.prototype.limited)).toBe(chatLimitFacts);
  });

  it('lets a handler without @RequestLimits through untouched', () => {
    const admit = jest.fn();
    const guard = new RequestLimitsGuard(new Reflector(), { admit } as unknown as LimitsService);
    expect(guard.canActivate(context('free', {}))).toBe(true);
    expect(admit).not.toHaveBeenCalled();
  });
});
