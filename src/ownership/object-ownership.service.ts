import { Inject, Injectable, Logger } from '@nestjs/common';
import { type ApiKeyInfo, keyMayUseModel } from '../common/key-policy';
import { GatewayError } from '../common/errors/gateway-errors';
import type { OwnedObject, OwnerStore } from './owner-store';

/** The store of owner records (database or memory), provided by OwnershipModule. */
export const OWNER_STORE = Symbol('OWNER_STORE');

/** What a key may do with a stored object's id. */
export type Access =
  /** Its own object, of a model it may still use. */
  | 'owner'
  /** No record (made before owners were recorded, or unknown): only an admin key passes. */
  | 'unrecorded'
  | 'refused';

/** The owner records could not be read: the request is refused rather than let through. */
export class OwnershipUnavailableError extends GatewayError {
  constructor(cause: unknown) {
    super(
      503,
      'overloaded',
      'The owner of this object could not be checked right now because the key store is unreachable. Please retry shortly.',
      { code: 'key_store_unavailable', headers: { 'retry-after': '1' }, cause },
    );
  }
}

/**
 * Who owns the server-side objects whose ids the gateway relays (stored responses, their
 * items; any later kind is one more `kind` value). Formats record what they relay and ask
 * before they forward an id. Writes run in the background; until one is durable its records
 * are answered from memory, so this replica never misses an object it just relayed.
 */
@Injectable()
export class ObjectOwnership {
  private readonly logger = new Logger(ObjectOwnership.name);
  /** Records whose write has not settled yet, by id. */
  private readonly pending = new Map<string, OwnedObject>();

  constructor(@Inject(OWNER_STORE) private readonly store: OwnerStore) {}

  /**
   * Records `objects`; settles once they are durable. Never rejects: a failed write is
   * logged and its objects stay unrecorded, that is refused to everyone but an admin key.
   */
  record(objects: readonly OwnedObject[]): Promise<void> {
    if (objects.length === 0) {
      return Promise.resolve();
    }
    for (const object of objects) {
      if (!this.pending.has(object.id)) {
        this.pending.set(object.id, object);
      }
    }
    return this.store.insert(objects).then(
      () => this.settle(objects),
      (error: unknown) => {
        this.settle(objects);
        this.logger.warn(
          `could not record the owner of ${objects.length} object(s) (${objects[0].kind} ${objects[0].id}): ${(error as Error).message}`,
        );
      },
    );
  }

  /** The records of `ids` that exist (this replica's unsettled writes included). */
  async find(ids: readonly string[]): Promise<Map<string, OwnedObject>> {
    const found = new Map<string, OwnedObject>();
    const missing: string[] = [];
    for (const id of ids) {
      const record = this.pending.get(id);
      if (record) {
        found.set(id, record);
      } else if (!found.has(id)) {
        missing.push(id);
      }
    }
    if (missing.length > 0) {
      let rows: OwnedObject[];
      try {
        rows = await this.store.find([...new Set(missing)]);
      } catch (error) {
        throw new OwnershipUnavailableError(error);
      }
      for (const row of rows) {
        found.set(row.id, row);
      }
    }
    return found;
  }

  /** Forgets `id` and its children once the owner deleted it. */
  async forget(id: string): Promise<void> {
    this.pending.delete(id);
    try {
      await this.store.remove(id);
    } catch (error) {
      // The object is gone upstream: a stale record only lets its owner get the upstream 404.
      this.logger.warn(`could not forget the owner record of ${id}: ${(error as Error).message}`);
    }
  }

  private settle(objects: readonly OwnedObject[]): void {
    for (const object of objects) {
      if (this.pending.get(object.id) === object) {
        this.pending.delete(object.id);
      }
    }
  }
}

/**
 * What `key` may do with an object given its record: only the key that made it reaches it,
 * and only while its model scope still allows the object's model; an object with no record
 * is reachable by an admin key alone. Keys of one team do not share objects.
 */
export function accessOf(record: OwnedObject | undefined, key: ApiKeyInfo): Access {
  if (record === undefined) {
    return key.admin === true ? 'unrecorded' : 'refused';
  }
  return record.keyId === key.id && keyMayUseModel(key, record.model) ? 'owner' : 'refused';
}
