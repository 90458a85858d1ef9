import { createHash, randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';

/** What the gateway knows about an accepted client key. */
export interface ApiKeyInfo {
  /** Stable, non-reversible identifier (first 12 hex chars of the SHA-256). */
  id: string;
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * Verifies client keys by hashed lookup: the presented key is hashed and looked up in a
 * map of hashes, so the comparison time does not depend on how much of a key matches,
 * and no plaintext key is kept in memory after boot.
 */
@Injectable()
export class ApiKeyService {
  private readonly logger = new Logger(ApiKeyService.name);
  private readonly keys = new Map<string, ApiKeyInfo>();

  constructor(config: ConfigService<AllConfig, true>) {
    const { apiKeys, devApiKey } = config.get('auth', { infer: true });
    const { nodeEnv } = config.get('app', { infer: true });
    let keys = apiKeys;
    if (keys.length === 0) {
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
      const hash = sha256(key);
      this.keys.set(hash, { id: hash.slice(0, 12) });
    }
  }

  /** The key's info when it is accepted, otherwise undefined. */
  verify(presented: string): ApiKeyInfo | undefined {
    return this.keys.get(sha256(presented));
  }
}
