import type { ConfigService } from '@nestjs/config';
import type { ApiKeyInfo } from '../common/key-policy';
import type { CatalogModel } from '../catalog/catalog.types';
import type { AllConfig } from '../config';
import { readObservabilityConfig } from '../config/observability.config';
import type { CanonicalResponse } from '../core/canonical';
import { MetricsService } from '../observability/metrics/metrics.service';
import type { CacheConfig } from '../config/cache.config';
import { type CacheStore, MemoryCacheStore } from './cache-store';
import { type CacheRequest, ResponseCache, cacheScope } from './response-cache';

const CONFIG: CacheConfig = {
  defaultTtlS: 0,
  maxBytes: 1 << 20,
  maxEntries: 100,
  maxEntryBytes: 2048,
  keyPrefix: 'gw:rc:',
};

function cacheOver(store: CacheStore, config: Partial<CacheConfig> = {}) {
  const metrics = new MetricsService(readObservabilityConfig({}));
  const values = { cache: { ...CONFIG, ...config } };
  const service = new ResponseCache(
    { get: (ns: 'cache') => values[ns] } as unknown as ConfigService<AllConfig, true>,
    store,
    metrics,
  );
  return { service, metrics };
}

const model = (cacheTtlS?: number): CatalogModel =>
  ({ id: 'm', ...(cacheTtlS === undefined ? {} : { cacheTtlS }) }) as CatalogModel;

const request = (over: Partial<CacheRequest> = {}): CacheRequest => ({
  format: 'chat_completions',
  model: model(30),
  candidates: ['m'],
  body: { model: 'm', messages: [] },
  protections: [],
  key: undefined,
  headers: {},
  ...over,
});

const RESPONSE: CanonicalResponse = {
  id: 'r1',
  model: 'up',
  created: 1,
  content: [{ type: 'text', text: 'Hello' }],
  finishReason: 'stop',
  usage: { inputTokens: 3, outputTokens: 1 },
};

describe('ResponseCache', () => {
  it('applies to a model with a ttl of its own or the default one, and to no other', () => {
    const { service } = cacheOver(new MemoryCacheStore(1 << 20, 10));
    expect(service.appliesTo(model())).toBe(false);
    expect(service.ticket(request({ model: model() }))).toBeUndefined();
    expect(service.ticket(request({ model: model(0) }))).toBeUndefined();
    expect(service.ticket(request())).toMatchObject({ ttlMs: 30_000, lookup: true });
    const { service: all } = cacheOver(new MemoryCacheStore(1 << 20, 10), { defaultTtlS: 5 });
    expect(all.ticket(request({ model: model() }))).toMatchObject({ ttlMs: 5_000 });
    // A model's own 0 turns it off even when every model is cached.
    expect(all.ticket(request({ model: model(0) }))).toBeUndefined();
  });

  it('follows Cache-Control: no-cache stores without a lookup, no-store does neither', () => {
    const { service } = cacheOver(new MemoryCacheStore(1 << 20, 10));
    expect(service.ticket(request({ headers: { 'cache-control': 'no-cache' } }))).toMatchObject({
      lookup: false,
    });
    expect(service.ticket(request({ headers: { 'cache-control': 'no-store' } }))).toBeUndefined();
  });

  it('stores and finds an answer, counting hits and misses', async () => {
    const { service, metrics } = cacheOver(new MemoryCacheStore(1 << 20, 10));
    const ticket = service.ticket(request())!;
    expect(await service.lookup(ticket)).toBeUndefined();
    service.store(ticket, { model: 'm', response: RESPONSE });
    expect(await service.lookup(ticket)).toEqual({ model: 'm', response: RESPONSE });
    const text = await metrics.scrape();
    expect(text).toContain(
      'gateway_response_cache_lookups_total{format="chat_completions",model="m",result="hit"} 1',
    );
    expect(text).toContain(
      'gateway_response_cache_lookups_total{format="chat_completions",model="m",result="miss"} 1',
    );
    expect(text).toContain(
      'gateway_response_cache_stores_total{format="chat_completions",model="m"} 1',
    );
  });

  it('does not store an answer over the entry bound', async () => {
    const { service } = cacheOver(new MemoryCacheStore(1 << 20, 10));
    const ticket = service.ticket(request())!;
    const big = { ...RESPONSE, content: [{ type: 'text' as const, text: 'x'.repeat(3000) }] };
    service.store(ticket, { model: 'm', response: big });
    expect(await service.lookup(ticket)).toBeUndefined();
  });

  it('makes a failing or unreadable store a miss, never a failed request', async () => {
    const failing: CacheStore = {
      kind: 'redis',
      get: () => Promise.reject(new Error('Command timed out')),
      set: () => Promise.reject(new Error('Command timed out')),
      close: () => Promise.resolve(),
    };
    const { service, metrics } = cacheOver(failing);
    const ticket = service.ticket(request())!;
    expect(await service.lookup(ticket)).toBeUndefined();
    service.store(ticket, { model: 'm', response: RESPONSE });
    await new Promise((r) => setImmediate(r));
    const text = await metrics.scrape();
    expect(text).toContain('gateway_response_cache_errors_total{operation="get"} 1');
    expect(text).toContain('gateway_response_cache_errors_total{operation="set"} 1');

    const garbage = new MemoryCacheStore(1 << 20, 10);
    const { service: reader } = cacheOver(garbage);
    garbage.set(ticket.key, '{"v":0,"model":"m"}', 60_000);
    expect(await reader.lookup(ticket)).toBeUndefined();
    // An entry of another writer without usage would fail the replay: a miss instead.
    garbage.set(ticket.key, '{"v":1,"model":"m","response":{"content":[]}}', 60_000);
    expect(await reader.lookup(ticket)).toBeUndefined();
    garbage.set(ticket.key, 'not json', 60_000);
    expect(await reader.lookup(ticket)).toBeUndefined();
  });
});

describe('cacheScope', () => {
  const key = (over: Partial<ApiKeyInfo>): ApiKeyInfo => ({
    id: 'k1',
    limits: {},
    modelLimits: new Map(),
    ...over,
  });

  it('shares among a managed key’s team; a static or teamless key is its own scope', () => {
    expect(cacheScope(key({ source: 'managed', team: 'ops' }))).toBe('team:ops');
    expect(cacheScope(key({ source: 'managed' }))).toBe('key:k1');
    expect(cacheScope(key({ source: 'static' }))).toBe('key:k1');
    expect(cacheScope(key({}))).toBe('key:k1');
    expect(cacheScope(undefined)).toBe('open');
  });
});
