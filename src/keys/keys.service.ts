import { Inject, Injectable, Logger } from '@nestjs/common';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import { issueSecret, newKeyId } from './key-secret';
import {
  KEY_REPOSITORY,
  type KeyChanges,
  type KeyListQuery,
  type KeyRepository,
  type ManagedKeyRecord,
} from './key-record';

/** A key as created: the only moment its secret exists outside the caller's hands. */
export interface CreatedKey {
  key: ManagedKeyRecord;
  secret: string;
}

/**
 * Creating, changing, revoking and rotating managed keys. Every change is announced on
 * the `gw_keys` channel, so each replica's key cache reloads the key within moments.
 * Input is validated by the caller (the admin API); this layer owns secrets and storage.
 */
@Injectable()
export class KeysService {
  private readonly logger = new Logger(KeysService.name);

  constructor(
    @Inject(KEY_REPOSITORY) private readonly repo: KeyRepository,
    @Inject(DATABASE) private readonly database: OpenDatabase,
  ) {}

  async create(changes: KeyChanges & { name: string }): Promise<CreatedKey> {
    const issued = issueSecret();
    const key = await this.repo.create(newKeyId(), changes, issued);
    this.logger.log(`created key ${key.id} (${key.name})`);
    // Announced like any change: every replica forgets the secrets it found in no key.
    await this.database.events.publish('gw_keys', key.id);
    return { key, secret: issued.secret };
  }

  get(id: string): Promise<ManagedKeyRecord | undefined> {
    return this.repo.get(id);
  }

  list(query: KeyListQuery): Promise<{ keys: ManagedKeyRecord[]; next?: string }> {
    return this.repo.list(query, new Date());
  }

  async update(id: string, changes: KeyChanges): Promise<ManagedKeyRecord | undefined> {
    return this.announced(id, await this.repo.update(id, changes, new Date()));
  }

  async revoke(id: string, reason: string | null): Promise<ManagedKeyRecord | undefined> {
    const key = await this.announced(id, await this.repo.revoke(id, reason, new Date()));
    if (key) {
      this.logger.log(`revoked key ${id}`);
    }
    return key;
  }

  /** A new secret; the old ones keep working for `graceSeconds` (0: they stop now). */
  async rotate(id: string, graceSeconds: number): Promise<CreatedKey | undefined> {
    const issued = issueSecret();
    const now = new Date();
    const oldUntil = new Date(now.getTime() + graceSeconds * 1000);
    const key = await this.announced(id, await this.repo.rotate(id, issued, oldUntil, now));
    return key ? { key, secret: issued.secret } : undefined;
  }

  private async announced(
    id: string,
    key: ManagedKeyRecord | undefined,
  ): Promise<ManagedKeyRecord | undefined> {
    if (key) {
      await this.database.events.publish('gw_keys', id);
    }
    return key;
  }
}
