import { Global, Module } from '@nestjs/common';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import { OWNER_STORE, ObjectOwnership } from './object-ownership.service';
import { KyselyOwnerStore, MemoryOwnerStore, type OwnerStore } from './owner-store';

/** Records kept in memory when there is no key store (KEY_STORE=off). */
const MEMORY_CAPACITY = 100_000;

/**
 * Owner records of stored server-side objects: in the key store's database, or, with
 * KEY_STORE=off, in this process's memory. Global so that any format can record and check.
 */
@Global()
@Module({
  providers: [
    {
      provide: OWNER_STORE,
      inject: [DATABASE],
      useFactory: (database: OpenDatabase | null): OwnerStore =>
        database ? new KyselyOwnerStore(database.db) : new MemoryOwnerStore(MEMORY_CAPACITY),
    },
    ObjectOwnership,
  ],
  exports: [ObjectOwnership],
})
export class OwnershipModule {}
