import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { ConfigService } from '@nestjs/config';
import type { ApiKeyService } from '../auth/api-key.service';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import { ContextLengthExceededError } from '../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { AllConfig } from '../config';
import { chatLimitFacts } from '../formats/chat-completions/chat.limits';
import { LimitsHealth } from './limits-health';
import { LimitsService } from './limits.service';
import { MemoryRateLimitStore } from './rate/memory.store';
import { windowEstimate } from './tokens/token-estimator';

/* eslint-disable @typescript-eslint/no-require-imports */
const o200k = new Tiktoken(require('js-tiktoken/ranks/o200k_base') as TiktokenBPE);
/* eslint-enable @typescript-eslint/no-require-imports */

const TEXT = 'The quick brown fox jumps over the lazy dog while counting tokens. '.repeat(300);
const facts = chatLimitFacts({ model: 'm', messages: [{ role: 'user', content: TEXT }] });

function admit(family: string, contextWindow: number): unknown {
  const model = {
    id: 'm',
    family,
    contextWindow,
    maxOutputTokens: 10,
    provider: { available: true },
  } as CatalogModel;
  const catalog = new CatalogService({ providers: new Map(), models: new Map([['m', model]]) });
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
  const req = { path: '/v1/chat/completions', ctx: { requestId: 'r', startedAt: 0n } };
  try {
    return service.admit(
      facts,
      req as unknown as GatewayRequest,
      { setHeader: () => undefined, once: () => undefined } as unknown as GatewayResponse,
    );
  } catch (e) {
    return e;
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
    expect(admit('openai', tokens)).toBe(true);
  });

  it('keeps its tolerance where the tokenizer is an approximation', () => {
    const estimate = windowEstimate(facts, 'anthropic');
    expect(estimate.tolerance).toBe(0.15);
    expect(admit('anthropic', Math.floor(estimate.tokens / 1.05))).toBe(true);
    expect(admit('anthropic', Math.floor(estimate.tokens / 1.25))).toBeInstanceOf(
      ContextLengthExceededError,
    );
  });
});
