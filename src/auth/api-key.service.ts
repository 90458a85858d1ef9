import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { AuthFailureThrottle } from './auth-throttle';
import type { ApiKeyInfo, LimitOverrides } from '../common/key-policy';
import { type KeysFile, loadKeysFile } from './keys-file';
import { hasIssuedShape, sha256Hex } from '../keys/key-secret';
import {
  type KeyVerdict,
  MANAGED_KEYS,
  type ManagedKeyLookup,
  UNKNOWN_KEY,
} from '../keys/managed-keys';

const NO_FILE: KeysFile = { defaults: {}, models: new Map(), keys: [] };

/**
 * Verifies client keys by hashed lookup: the presented key is hashed and looked up in a
 * map of hashes, so the comparison time does not depend on how much of a key matches,
 * and no plaintext key is kept in memory after boot. Keys come from `GATEWAY_API_KEYS`
 * and from the keys file (`GATEWAY_KEYS_FILE`), which also carries per-key limits; any
 * other key is asked of the managed key store (admin API keys) when there is one.
 */
@Injectable()
export class ApiKeyService {
  private readonly logger = new Logger(ApiKeyService.name);
  private readonly keys = new Map<string, ApiKeyInfo>();
  private readonly byId = new Map<string, ApiKeyInfo>();

  constructor(
    config: ConfigService<AllConfig, true>,
    @Optional() @Inject(MANAGED_KEYS) private readonly managed?: ManagedKeyLookup | null,
    /** Failed authentications per client address (see authenticateRequest); absent: none. */
    @Optional() readonly throttle?: AuthFailureThrottle,
  ) {
    const { apiKeys, devApiKey, keysFile } = config.get('auth', { infer: true });
    const { nodeEnv } = config.get('app', { infer: true });
    const file = keysFile ? loadKeysFile(keysFile) : NO_FILE;
    let keys = apiKeys;
    let label = (i: number): string => `GATEWAY_API_KEYS #${i + 1}`;
    if (keys.length === 0 && file.keys.length === 0 && nodeEnv === 'production') {
      // Config validation already refuses this without a key store; keep the guard here too.
      if (!this.managed) {
        throw new Error('GATEWAY_API_KEYS must be set when NODE_ENV=production');
      }
      // Keys are issued by the admin API and the console, into the key store.
    } else if (keys.length === 0 && file.keys.length === 0) {
      const key = devApiKey ?? `gw-dev-${randomBytes(18).toString('base64url')}`;
      keys = [key];
      label = () => (devApiKey === undefined ? 'development key' : 'GATEWAY_DEV_API_KEY');
      this.logger.warn(
        `No GATEWAY_API_KEYS configured: accepting the development key ${key} (never do this in production)`,
      );
    }
    keys.forEach((key, i) =>
      this.add(sha256Hex(key), label(i), file.defaults, new Map(), file, false),
    );
    // A key listed in both places takes its settings (and name) from the file.
    file.keys.forEach((entry, i) => {
      const name = entry.name ?? entry.keyEnv ?? `GATEWAY_KEYS_FILE keys[${i}]`;
      this.add(entry.hash, name, entry.limits, entry.models, file, entry.admin);
    });
    if (keysFile) {
      this.logger.log(`Loaded ${file.keys.length} client keys from ${keysFile}`);
    }
  }

  /** The static key's info when `presented` is one, otherwise undefined. */
  verify(presented: string): ApiKeyInfo | undefined {
    return this.keys.get(sha256Hex(presented));
  }

  /**
   * What is known about a presented key: static keys answer at once, managed keys from
   * the store's cache (a promise on a miss). Expiry is left to the caller, who knows the
   * time of the request.
   */
  resolve(presented: string): KeyVerdict | Promise<KeyVerdict> {
    const hash = sha256Hex(presented);
    const info = this.keys.get(hash);
    if (info) {
      return { status: 'active', info };
    }
    return this.managed && hasIssuedShape(presented) ? this.managed.lookup(hash) : UNKNOWN_KEY;
  }

  /** True while the key store is being read for this secret (a lookup now would join it). */
  lookupInFlight(presented: string): boolean {
    return hasIssuedShape(presented) && this.managed?.loading(sha256Hex(presented)) === true;
  }

  /**
   * {@link resolve} without the key store: undefined where it would have to be asked (a
   * managed key not cached). What a throttled client address is answered from.
   */
  resolveCached(presented: string): KeyVerdict | undefined {
    const hash = sha256Hex(presented);
    const info = this.keys.get(hash);
    if (info) {
      return { status: 'active', info };
    }
    return this.managed && hasIssuedShape(presented) ? this.managed.peek(hash) : UNKNOWN_KEY;
  }

  /** The info of an accepted key by its id (`req.ctx.keyId`). */
  info(id: string): ApiKeyInfo | undefined {
    return this.byId.get(id) ?? this.managed?.info(id);
  }

  /** The keys from GATEWAY_API_KEYS and the keys file (read-only in the admin API). */
  staticKeys(): ApiKeyInfo[] {
    return [...this.byId.values()];
  }

  /** Whether any key has, overall or for a model, a limit for which `test` holds. */
  anyLimit(test: (limits: LimitOverrides) => boolean): boolean {
    for (const info of this.byId.values()) {
      if (test(info.limits) || [...info.modelLimits.values()].some(test)) {
        return true;
      }
    }
    return false;
  }

  /** Model ids that some key has per-model limits for. */
  modelsWithLimits(): Set<string> {
    const models = new Set<string>();
    for (const info of this.byId.values()) {
      for (const model of info.modelLimits.keys()) {
        models.add(model);
      }
    }
    return models;
  }

  private add(
    hash: string,
    name: string,
    limits: LimitOverrides,
    models: ReadonlyMap<string, LimitOverrides>,
    file: KeysFile,
    admin: boolean,
  ): void {
    // File-wide settings first, the key's own on top, field by field.
    const modelLimits = new Map(file.models);
    for (const [model, own] of models) {
      modelLimits.set(model, { ...file.models.get(model), ...own });
    }
    const info: ApiKeyInfo = {
      id: hash.slice(0, 12),
      name,
      limits: { ...file.defaults, ...limits },
      modelLimits,
      source: 'static',
      ...(admin ? { admin } : {}),
    };
    this.keys.set(hash, info);
    this.byId.set(info.id, info);
  }
}
