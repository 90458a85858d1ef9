import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, IsOptional, IsUrl, Min } from 'class-validator';
import { readNamespace } from './validate-env';

const URL_OPTS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };

/** Upstream HTTP behaviour, and the provider endpoints the shipped catalog reads. */
export class UpstreamEnv {
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;
  /** Time to the upstream's response headers (a non-streamed answer arrives all at once). */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_HEADERS_TIMEOUT_MS = 600_000;
  /** Longest silence allowed between two chunks of an upstream body. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_BODY_TIMEOUT_MS = 300_000;
  /** Connections per upstream origin; 0 means no cap, so streams never queue. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_MAX_CONNECTIONS = 0;
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_KEEPALIVE_TIMEOUT_MS = 60_000;
  @Expose() @IsOptional() @IsUrl(URL_OPTS) OPENAI_BASE_URL?: string;
  @Expose() @IsOptional() @IsUrl(URL_OPTS) ANTHROPIC_BASE_URL?: string;
}

export interface UpstreamConfig {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxConnections: number;
  keepAliveTimeoutMs: number;
}

export const upstreamConfig = registerAs('upstream', (): UpstreamConfig => {
  const env = readNamespace(UpstreamEnv);
  return {
    connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: env.UPSTREAM_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: env.UPSTREAM_BODY_TIMEOUT_MS,
    maxConnections: env.UPSTREAM_MAX_CONNECTIONS,
    keepAliveTimeoutMs: env.UPSTREAM_KEEPALIVE_TIMEOUT_MS,
  };
});
