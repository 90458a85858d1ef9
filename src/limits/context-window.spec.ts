import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { ConfigService } from '@nestjs/config';
import type { ApiKeyService } from '../auth/api-key.service';
import { type ApiKeyInfo, ModelScope } from '../common/key-policy';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import { ContextLengthExceededError } from '../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { AllConfig } from '../config';
import { chatLimitFacts } from '../formats/chat-completions/chat.limits';
import { LimitsHealth } from './limits-health';
import { ADMITTED, type Admission, LimitsService } from './limits.service';
import { MemoryRateLimitStore } from './rate/memory.store';
import { testModel } from '../testing/test-model';
import { FallbackPlan } from '../resilience/fallback-plan';
import { BpeCounter } from './tokens/bpe-counter';
import { windowEstimate } from './tokens/token-estimator';

/* eslint-disable @typescript-eslint/no-require-imports */
const o200k = new Tiktoken(require('js-tiktoken/ranks/o200k_base') as TiktokenBPE);
/* eslint-enable @typescript-eslint/no-require-imports */

const TEXT = 'The quick brown fox jumps over the lazy dog while counting tokens. '.repeat(300);
const facts = chatLimitFacts({ model: 'm', messages: [{ role: 'user', content: TEXT }] });

function modelOf(
  id: string,
  family: string,
  contextWindow: number,
  fallbacks?: string[],
): CatalogModel {
  return testModel('chat_completions', {
    id,
    family,
    contextWindow,
    maxOutputTokens: 10,
    fallbacks,
    endpoints: new Set(['chat_completions']),
  });
}

function admit(family: string, contextWindow: number): unknown {
  return admitTo([modelOf('m', family, contextWindow)]).outcome;
}

/** Admits the chat request for the first of `models` (the catalog), as `key` when given. */
function admitTo(
  models: CatalogModel[],
  key?: ApiKeyInfo,
): { outcome: unknown; req: GatewayRequest; catalog: CatalogService } {
  const catalog = new CatalogService({
    providers: new Map(),
    models: new Map(models.map((m) => [m.id, m])),
  });
  const limits = {
    defaults: { requestsPerMinute: 0, tokensPerMinute: 0, maxConcurrentStreams: 0 },
    defaultOutputTokens: 0,
    failMode: 'open',
    redisKeyPrefix: 't:',
    redisCommandTimeoutMs: 100,
    maxMessages: 10,
    maxTools: 10,
    maxContentParts: 10,
  };
  const config = { get: () => limits } as unknown as ConfigService<AllConfig, true>;
  const keys = { info: () => undefined, anyLimit: () => false } as unknown as ApiKeyService;
  const store = new MemoryRateLimitStore();
  const service = new LimitsService(config, catalog, keys, store, new LimitsHealth());
  const req = {
    path: '/v1/chat/completions',
    headers: {},
    ctx: { requestId: 'r', startedAt: 0n, keyId: key?.id, key },
  } as unknown as GatewayRequest;
  const res = { setHeader: () => undefined, once: () => undefined } as unknown as GatewayResponse;
  try {
    // The request's plan chooses the fallback, as the generation guard does.
    const fallbacks = new FallbackPlan(catalog);
    const outcome = service.admit({ ...facts, model: models[0].id }, req, res, {
      contextFallback: (fits) =>
        fallbacks.contextFallback(models[0], key, 'chat_completions', fits),
    });
    return { outcome, req, catalog };
  } catch (e) {
    return { outcome: e, req, catalog };
  } finally {
    void store.close();
  }
}

describe('the context-window check', () => {
  it('counts plain text exactly with o200k_base (the cookbook framing on top)', () => {
    const estimate = windowEstimate(facts, 'openai');
    expect(estimate).toEqual({ tokens: o200k.encode(TEXT).length + 4 + 3, tolerance: 0 });
  });

  it('rejects a prompt only 5% over the window when the tokenizer is exact', () => {
    const tokens = windowEstimate(facts, 'openai').tokens;
    expect(admit('openai', Math.floor(tokens / 1.05))).toBeInstanceOf(ContextLengthExceededError);
    expect(admit('openai', tokens)).toBe(ADMITTED);
  });

  it('keeps its tolerance where the tokenizer is an approximation', () => {
    const estimate = windowEstimate(facts, 'anthropic');
    expect(estimate.tolerance).toBe(0.15);
    expect(admit('anthropic', Math.floor(estimate.tokens / 1.05))).toBe(ADMITTED);
    expect(admit('anthropic', Math.floor(estimate.tokens / 1.25))).toBeInstanceOf(
      ContextLengthExceededError,
    );
  });
});

describe('the context-window fallback', () => {
  const tokens = windowEstimate(facts, 'openai').tokens;
  const catalog = [
    modelOf('small', 'openai', Math.floor(tokens / 2), ['medium', 'forbidden-big', 'big']),
    modelOf('medium', 'openai', tokens - 100),
    modelOf('forbidden-big', 'openai', tokens * 4),
    modelOf('big', 'openai', tokens * 2),
  ];
  const keyFor = (...models: string[]): ApiKeyInfo => ({
    id: 'key_1',
    limits: {},
    modelLimits: new Map(),
    scope: { models: new ModelScope(models) },
  });

  it('skips a larger fallback the key may not use and serves the next one it may', () => {
    const key = keyFor('small', 'medium', 'big');
    const { outcome, catalog: service } = admitTo(catalog, key);
    const larger = (outcome as Admission).contextFallback;
    expect(larger?.id).toBe('big');
    const plan = new FallbackPlan(service).candidates(
      catalog[0],
      key,
      'chat_completions',
      undefined,
      larger,
    );
    expect(plan.map((m) => m.id)).toEqual(['big']);
  });

  it('answers context_length_exceeded when every fallback that holds the prompt is out of scope', () => {
    const { outcome } = admitTo(catalog, keyFor('small', 'medium'));
    expect(outcome).toBeInstanceOf(ContextLengthExceededError);
  });

  it('still takes the first fallback that holds the prompt for a key without a model scope', () => {
    const { outcome } = admitTo(catalog, { ...keyFor(), scope: undefined });
    expect((outcome as Admission).contextFallback?.id).toBe('forbidden-big');
  });

  it('tokenizes the prompt once, however many candidates of its family are compared', () => {
    const count = jest.spyOn(BpeCounter.prototype, 'count');
    try {
      const { outcome } = admitTo(catalog, keyFor('small', 'medium', 'big'));
      expect((outcome as Admission).contextFallback?.id).toBe('big');
      expect(count).toHaveBeenCalledTimes(facts.texts.length);
    } finally {
      count.mockRestore();
    }
  });
});
