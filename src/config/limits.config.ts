import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { readNamespace } from './validate-env';

export const FAIL_MODES = ['open', 'closed'] as const;
export type FailMode = (typeof FAIL_MODES)[number];

/**
 * Rate limits (defaults per client key; the keys file overrides them per key and per
 * model), where their counters live, and the request limits checked before any upstream
 * call. A rate of 0 means no limit.
 */
export class LimitsEnv {
  @Expose() @Type(() => Number) @IsInt() @Min(0) RATE_LIMIT_REQUESTS_PER_MINUTE = 0;
  @Expose() @Type(() => Number) @IsInt() @Min(0) RATE_LIMIT_TOKENS_PER_MINUTE = 0;
  @Expose() @Type(() => Number) @IsInt() @Min(0) RATE_LIMIT_MAX_CONCURRENT_STREAMS = 0;
  /** Output tokens reserved against tokens-per-minute when a request sets no maximum. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) RATE_LIMIT_DEFAULT_OUTPUT_TOKENS = 1024;
  /** What a request meets when Redis is unreachable: let through, or 503. */
  @Expose() @IsIn(FAIL_MODES) RATE_LIMIT_FAIL_MODE: FailMode = 'open';
  /** Shared counters for every replica; unset keeps them in this process's memory. */
  @Expose()
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;
  @Expose()
  @IsString()
  @Matches(/^[\w:.-]{1,64}$/, { message: 'REDIS_KEY_PREFIX must be 1-64 of [A-Za-z0-9_:.-]' })
  REDIS_KEY_PREFIX = 'gw:rl:';
  /** A Redis command slower than this counts as Redis being unavailable. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(60_000) REDIS_COMMAND_TIMEOUT_MS = 250;
  @Expose() @Type(() => Number) @IsInt() @Min(1) REQUEST_MAX_MESSAGES = 2048;
  @Expose() @Type(() => Number) @IsInt() @Min(0) REQUEST_MAX_TOOLS = 128;
  @Expose() @Type(() => Number) @IsInt() @Min(1) REQUEST_MAX_CONTENT_PARTS = 4096;
}

/** Per-key rates; 0 (or absent) means unlimited. */
export interface RateLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
  maxConcurrentStreams: number;
}

export interface LimitsConfig {
  defaults: RateLimits;
  defaultOutputTokens: number;
  failMode: FailMode;
  redisUrl?: string;
  redisKeyPrefix: string;
  redisCommandTimeoutMs: number;
  maxMessages: number;
  maxTools: number;
  maxContentParts: number;
}

export const limitsConfig = registerAs('limits', (): LimitsConfig => {
  const env = readNamespace(LimitsEnv);
  return {
    defaults: {
      requestsPerMinute: env.RATE_LIMIT_REQUESTS_PER_MINUTE,
      tokensPerMinute: env.RATE_LIMIT_TOKENS_PER_MINUTE,
      maxConcurrentStreams: env.RATE_LIMIT_MAX_CONCURRENT_STREAMS,
    },
    defaultOutputTokens: env.RATE_LIMIT_DEFAULT_OUTPUT_TOKENS,
    failMode: env.RATE_LIMIT_FAIL_MODE,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    maxMessages: env.REQUEST_MAX_MESSAGES,
    maxTools: env.REQUEST_MAX_TOOLS,
    maxContentParts: env.REQUEST_MAX_CONTENT_PARTS,
  };
});
