import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MANAGED_KEYS } from './managed-keys';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import { KeyCache } from './key-cache';
import { KEY_REPOSITORY, type KeyRepository } from './key-record';
import { KyselyKeyRepository } from './keys.repository';
import { KeysService } from './keys.service';

/** Wires change notifications from every replica into this replica's key cache. */
@Injectable()
class KeyCacheInvalidation implements OnModuleInit {
  constructor(
    @Inject(DATABASE) private readonly database: OpenDatabase | null,
    @Inject(MANAGED_KEYS) private readonly cache: KeyCache | null,
  ) {}

  onModuleInit(): void {
    const { database, cache } = this;
    if (database && cache) {
      database.events.subscribe('gw_keys', (id) => cache.invalidate(id));
      database.events.onResync(() => cache.markAllStale());
    }
  }
}

/**
 * Managed keys: storage, the in-process cache the auth guard reads through
 * `MANAGED_KEYS`, and the service behind the admin API. Global so that the auth module
 * finds `MANAGED_KEYS` without importing this one (which would tie auth to a database).
 * Everything is null when KEY_STORE=off.
 */
@Global()
@Module({
  providers: [
    {
      provide: KEY_REPOSITORY,
      inject: [DATABASE],
      useFactory: (database: OpenDatabase | null): KeyRepository | null =>
        database ? new KyselyKeyRepository(database.db) : null,
    },
    {
      provide: MANAGED_KEYS,
      inject: [KEY_REPOSITORY, ConfigService],
      useFactory: (
        repo: KeyRepository | null,
        config: ConfigService<AllConfig, true>,
      ): KeyCache | null => {
        const store = config.get('store', { infer: true });
        return repo
          ? new KeyCache(repo, store.keyCacheTtlMs, Date.now, {
              ttlMs: store.negativeCacheTtlMs,
              maxEntries: store.negativeCacheMax,
            })
          : null;
      },
    },
    KeyCacheInvalidation,
    KeysService,
  ],
  exports: [MANAGED_KEYS, KEY_REPOSITORY, KeysService],
})
export class KeysModule {}
