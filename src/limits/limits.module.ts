import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import type { AllConfig } from '../config';
import { LimitsHealth } from './limits-health';
import { LimitsHealthController } from './limits-health.controller';
import { LimitsMetrics } from './limits-metrics';
import { LimitsService } from './limits.service';
import { MemoryRateLimitStore } from './rate/memory.store';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate/rate-limit.store';
import { RequestLimitsGuard } from './request-limits.guard';

/**
 * Request and rate limits. Global so that a format module opts in with nothing more than
 * `@RequestLimits(extractor)` on its handler: the guard that decorator adds resolves its
 * dependencies here, whatever module the controller lives in.
 */
@Global()
@Module({
  imports: [CatalogModule, AuthModule],
  controllers: [LimitsHealthController],
  providers: [
    LimitsHealth,
    LimitsMetrics,
    {
      provide: RATE_LIMIT_STORE,
      inject: [ConfigService, LimitsHealth],
      useFactory: (
        config: ConfigService<AllConfig, true>,
        health: LimitsHealth,
      ): RateLimitStore => {
        const { redisUrl, redisCommandTimeoutMs } = config.get('limits', { infer: true });
        if (!redisUrl) {
          return new MemoryRateLimitStore();
        }
        // Required here, not imported: ioredis is ~40 modules a single replica never uses.
        const { RedisRateLimitStore } =
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          require('./rate/redis.store') as typeof import('./rate/redis.store');
        return new RedisRateLimitStore({
          url: redisUrl,
          commandTimeoutMs: redisCommandTimeoutMs,
          onError: (operation, err) => health.storeError(operation, err),
        });
      },
    },
    LimitsService,
    RequestLimitsGuard,
  ],
  exports: [LimitsService, RATE_LIMIT_STORE],
})
export class LimitsModule {}
