import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CatalogModule } from '../catalog/catalog.module';
import { CatalogService } from '../catalog/catalog.service';
import type { AllConfig } from '../config';
import { CACHE_STORE, type CacheStore, MemoryCacheStore } from './cache-store';
import { ResponseCache } from './response-cache';

/**
 * The response cache: ResponseCache over Redis when REDIS_URL is set (the Redis the rate
 * limits use), else over a bounded in-memory LRU. The generation pipeline consults it.
 */
@Module({
  imports: [CatalogModule],
  providers: [
    {
      provide: CACHE_STORE,
      inject: [ConfigService, CatalogService],
      useFactory: (config: ConfigService<AllConfig, true>, catalog: CatalogService): CacheStore => {
        const cache = config.get('cache', { infer: true });
        const { redisUrl, redisCommandTimeoutMs } = config.get('limits', { infer: true });
        const used = cache.defaultTtlS > 0 || catalog.listAll().some((m) => (m.cacheTtlS ?? 0) > 0);
        // No Redis connection for a cache no model uses (the catalog is fixed at boot).
        if (!redisUrl || !used) {
          return new MemoryCacheStore(cache.maxBytes, cache.maxEntries);
        }
        // Required here, not imported: ioredis is ~40 modules a single replica never uses.
        const { RedisCacheStore } =
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          require('./redis-cache.store') as typeof import('./redis-cache.store');
        const logger = new Logger('ResponseCache');
        let lastLog = 0;
        return new RedisCacheStore({
          url: redisUrl,
          prefix: cache.keyPrefix,
          commandTimeoutMs: redisCommandTimeoutMs,
          onError: (operation, err) => {
            // Connection errors repeat while Redis is away: one line per 10 s.
            if (Date.now() - lastLog >= 10_000) {
              lastLog = Date.now();
              logger.warn(`Redis ${operation} error: ${(err as Error).message}`);
            }
          },
        });
      },
    },
    ResponseCache,
  ],
  exports: [ResponseCache],
})
export class CacheModule {}
