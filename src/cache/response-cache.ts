import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Counter } from 'prom-client';
import type { ApiKeyInfo } from '../common/key-policy';
import type { CatalogModel } from '../catalog/catalog.types';
import type { AllConfig } from '../config';
import type { CanonicalResponse } from '../core/canonical';
import { MetricChildren } from '../observability/metrics/metric-children';
import { MetricsService } from '../observability/metrics/metrics.service';
import type { CacheConfig } from '../config/cache.config';
import { cacheDirectives, cacheKey } from './cache-key';
import { CACHE_STORE, type CacheStore, MemoryCacheStore } from './cache-store';

/** A generation request as the cache sees it. */
export interface CacheRequest {
  /** The endpoint's wire format. */
  format: string;
  /** The requested catalog model (its `cacheTtlS` decides). */
  model: CatalogModel;
  /** Ids of the models that may serve, in order: the requested one, then its fallbacks. */
  candidates: readonly string[];
  /** The client's body as received. */
  body: Readonly<Record<string, unknown>>;
  /** Names of the protections on for the request. */
  protections: readonly string[];
  key: ApiKeyInfo | undefined;
  headers: IncomingHttpHeaders;
}

/** The cache's decision for one request that it applies to. */
export interface CacheTicket {
  readonly key: string;
  readonly ttlMs: number;
  /** False under `Cache-Control: no-cache`: served upstream, then stored. */
  readonly lookup: boolean;
  readonly format: string;
  readonly model: string;
}

/** A stored answer: the canonical response and the catalog model that produced it. */
export interface CachedAnswer {
  model: string;
  response: CanonicalResponse;
}

/** Who shares entries: a managed key's team, else the key alone; `open` without keys. */
export function cacheScope(key: ApiKeyInfo | undefined): string {
  if (key === undefined) {
    return 'open';
  }
  return key.team !== undefined && key.source === 'managed' ? `team:${key.team}` : `key:${key.id}`;
}

/**
 * The response cache (see the README's "Response cache"): decides whether a request may be
 * answered from an earlier identical one, looks it up, and stores completed answers. It
 * hashes nothing for a model that does not opt in, and a store that fails makes a miss,
 * never a failed request.
 */
@Injectable()
export class ResponseCache implements OnApplicationShutdown {
  private readonly logger = new Logger('ResponseCache');
  private readonly config: CacheConfig;
  private readonly results: MetricChildren<Counter.Internal>;
  private readonly stored: MetricChildren<Counter.Internal>;
  private readonly errors: MetricChildren<Counter.Internal>;
  private lastErrorLog = 0;

  constructor(
    config: ConfigService<AllConfig, true>,
    @Inject(CACHE_STORE) private readonly entries: CacheStore,
    metrics: MetricsService,
  ) {
    this.config = config.get('cache', { infer: true });
    this.results = new MetricChildren(
      metrics.counter({
        name: 'gateway_response_cache_lookups_total',
        help: 'Response cache lookups by endpoint format, model and result (hit or miss).',
        labelNames: ['format', 'model', 'result'],
      }),
    );
    this.stored = new MetricChildren(
      metrics.counter({
        name: 'gateway_response_cache_stores_total',
        help: 'Completed answers stored in the response cache.',
        labelNames: ['format', 'model'],
      }),
    );
    this.errors = new MetricChildren(
      metrics.counter({
        name: 'gateway_response_cache_errors_total',
        help: 'Response cache storage failures (a failed lookup is served as a miss).',
        labelNames: ['operation'],
      }),
    );
    const memory = this.entries;
    if (memory instanceof MemoryCacheStore) {
      metrics.gauge({
        name: 'gateway_response_cache_memory_bytes',
        help: 'Size of the entries of the in-memory response cache.',
        collect() {
          this.set(memory.usage.bytes);
        },
      });
      metrics.gauge({
        name: 'gateway_response_cache_memory_entries',
        help: 'Entries of the in-memory response cache.',
        collect() {
          this.set(memory.usage.entries);
        },
      });
    }
  }

  /** Whether answers of `model` are cached at all: one property read, nothing hashed. */
  appliesTo(model: CatalogModel): boolean {
    return (model.cacheTtlS ?? this.config.defaultTtlS) > 0;
  }

  /** Entries larger than this are not stored. */
  get maxEntryBytes(): number {
    return this.config.maxEntryBytes;
  }

  /** Where entries live (`memory` or `redis`). */
  get storage(): string {
    return this.entries.kind;
  }

  /**
   * The cache's decision for a request, or undefined when it does not apply: the model has
   * no ttl (nothing is hashed then) or the client sent `Cache-Control: no-store`.
   */
  ticket(request: CacheRequest): CacheTicket | undefined {
    const ttlS = request.model.cacheTtlS ?? this.config.defaultTtlS;
    if (ttlS <= 0) {
      return undefined;
    }
    const directives = cacheDirectives(request.headers['cache-control']);
    if (directives.noStore) {
      return undefined;
    }
    return {
      key: cacheKey({
        format: request.format,
        model: request.model.id,
        candidates: request.candidates,
        body: request.body,
        protections: request.protections,
        scope: cacheScope(request.key),
        headers: request.headers,
      }),
      ttlMs: ttlS * 1000,
      lookup: !directives.noCache,
      format: request.format,
      model: request.model.id,
    };
  }

  /** The stored answer for the ticket, counted as a hit or a miss. */
  async lookup(ticket: CacheTicket): Promise<CachedAnswer | undefined> {
    let found: CachedAnswer | undefined;
    try {
      const text = await this.entries.get(ticket.key);
      found = text === undefined ? undefined : parseEntry(text);
    } catch (err) {
      this.failed('get', err);
    }
    this.results.get([ticket.format, ticket.model, found ? 'hit' : 'miss']).inc();
    return found;
  }

  /** Counts a request that was not looked up (`no-cache`) as a miss. */
  skipped(ticket: CacheTicket): void {
    this.results.get([ticket.format, ticket.model, 'miss']).inc();
  }

  /** Stores a completed answer in the background; one over the size bound is not stored. */
  store(ticket: CacheTicket, answer: CachedAnswer): void {
    const text = JSON.stringify({ v: 1, model: answer.model, response: answer.response });
    if (Buffer.byteLength(text) > this.config.maxEntryBytes) {
      return;
    }
    try {
      const done = this.entries.set(ticket.key, text, ticket.ttlMs);
      if (done instanceof Promise) {
        done.then(
          () => this.stored.get([ticket.format, ticket.model]).inc(),
          (err: unknown) => this.failed('set', err),
        );
        return;
      }
      this.stored.get([ticket.format, ticket.model]).inc();
    } catch (err) {
      this.failed('set', err);
    }
  }

  onApplicationShutdown(): Promise<void> {
    return this.entries.close();
  }

  /** Counts a storage failure; logged at most every 10 s (a Redis outage fails every request). */
  failed(operation: string, err: unknown): void {
    this.errors.get([operation]).inc();
    const now = Date.now();
    if (now - this.lastErrorLog >= 10_000) {
      this.lastErrorLog = now;
      this.logger.warn(`response cache ${operation} failed: ${(err as Error).message}`);
    }
  }
}

/** An entry as stored, or undefined when it is not one this version wrote. */
function parseEntry(text: string): CachedAnswer | undefined {
  const entry = JSON.parse(text) as { v?: unknown; model?: unknown; response?: unknown };
  const response = entry.response as CanonicalResponse | undefined;
  if (
    entry.v !== 1 ||
    typeof entry.model !== 'string' ||
    typeof response !== 'object' ||
    response === null ||
    !Array.isArray(response.content) ||
    typeof response.usage !== 'object' ||
    response.usage === null
  ) {
    return undefined;
  }
  return { model: entry.model, response };
}
