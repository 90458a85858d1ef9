import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { readNamespace } from './validate-env';

/**
 * The response cache. Off unless a catalog model sets `cache: { ttl_s }` or
 * RESPONSE_CACHE_TTL_S gives every model a ttl. Entries go to Redis when REDIS_URL is set
 * (shared by every replica), otherwise to this process's memory within the two bounds.
 */
export class CacheEnv {
  /** Seconds an answer is replayed, for every model without its own `cache` (0: off). */
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(31_536_000) RESPONSE_CACHE_TTL_S = 0;
  /** In-memory store: total size of the entries, least recently used evicted first. */
  @Expose() @Type(() => Number) @IsInt() @Min(1024) RESPONSE_CACHE_MAX_BYTES = 64 * 1024 * 1024;
  /** In-memory store: number of entries. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) RESPONSE_CACHE_MAX_ENTRIES = 10_000;
  /** A larger answer is not stored (either store). */
  @Expose() @Type(() => Number) @IsInt() @Min(1024) RESPONSE_CACHE_MAX_ENTRY_BYTES = 1024 * 1024;
  @Expose()
  @IsString()
  @Matches(/^[\w:.-]{1,64}$/, {
    message: 'RESPONSE_CACHE_KEY_PREFIX must be 1-64 of [A-Za-z0-9_:.-]',
  })
  RESPONSE_CACHE_KEY_PREFIX = 'gw:rc:';
}

export interface CacheConfig {
  defaultTtlS: number;
  maxBytes: number;
  maxEntries: number;
  maxEntryBytes: number;
  keyPrefix: string;
}

export const cacheConfig = registerAs('cache', (): CacheConfig => {
  const env = readNamespace(CacheEnv);
  return {
    defaultTtlS: env.RESPONSE_CACHE_TTL_S,
    maxBytes: env.RESPONSE_CACHE_MAX_BYTES,
    maxEntries: env.RESPONSE_CACHE_MAX_ENTRIES,
    maxEntryBytes: env.RESPONSE_CACHE_MAX_ENTRY_BYTES,
    keyPrefix: env.RESPONSE_CACHE_KEY_PREFIX,
  };
});
