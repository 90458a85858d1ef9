import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { type KeysFile, type LimitOverrides, loadKeysFile, sha256Hex } from './keys-file';

/** What the gateway knows about an accepted client key. */
export interface ApiKeyInfo {
  /** Stable, non-reversible identifier (first 12 hex chars of the SHA-256). */
  id: string;
  /** Label from the keys file, for people reading logs. */
  name?: string;
  /** Rate-limit overrides of this key; absent fields use the environment defaults. */
  limits: LimitOverrides;
  /** Limits per model for this key, counted apart from (and on top of) `limits`. */
  modelLimits: ReadonlyMap<string, LimitOverrides>;
}

const NO_FILE: KeysFile = { defaults: {}, models: new Map(), keys: [] };

/**
 * Verifies client keys by hashed lookup: the presented key is hashed and looked up in a
 * map of hashes, so the comparison time does not depend on how much of a key matches,
 * and no plaintext key is kept in memory after boot. Keys come from `GATEWAY_API_KEYS`
 * and from the keys file (`GATEWAY_KEYS_FILE`), which also carries per-key limits.
 */
@Injectable()
export class ApiKeyService {
  private readonly logger = new Logger(ApiKeyService.name);
  private readonly keys = new Map<string, ApiKeyInfo>();
  private readonly byId = new Map<string, ApiKeyInfo>();

  constructor(config: ConfigService<AllConfig, true>) {
    const { apiKeys, devApiKey, keysFile } = config.get('auth', { infer: true });
    const { nodeEnv } = config.get('app', { infer: true });
    const file = keysFile ? loadKeysFile(keysFile) : NO_FILE;
    let keys = apiKeys;
    if (keys.length === 0 && file.keys.length === 0) {
      if (nodeEnv === 'production') {
        // Config validation already refuses this; keep the guard here too.
        throw new Error('GATEWAY_API_KEYS must be set when NODE_ENV=production');
      }
      const key = devApiKey ?? `gw-dev-${randomBytes(18).toString('base64url')}`;
      keys = [key];
      this.logger.warn(
        `No GATEWAY_API_KEYS configured: accepting the development key ${key} (never do this in production)`,
      );
    }
    for (const key of keys) {
      this.add(sha256Hex(key), undefined, file.defaults, new Map(), file);
    }
    // A key listed in both places takes its settings from the file.
    for (const entry of file.keys) {
      this.add(entry.hash, entry.name, entry.limits, entry.models, file);
    }
    if (keysFile) {
      this.logger.log(`Loaded ${file.keys.length} client keys from ${keysFile}`);
    }
  }

  /** The key's info when it is accepted, otherwise undefined. */
  verify(presented: string): ApiKeyInfo | undefined {
    return this.keys.get(sha256Hex(presented));
  }

  /** The info of an accepted key by its id (`req.ctx.keyId`). */
  info(id: string): ApiKeyInfo | undefined {
    return this.byId.get(id);
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
    name: string | undefined,
    limits: LimitOverrides,
    models: ReadonlyMap<string, LimitOverrides>,
    file: KeysFile,
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
    };
    this.keys.set(hash, info);
    this.byId.set(info.id, info);
  }
}
