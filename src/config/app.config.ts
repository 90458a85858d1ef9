import { isIP } from 'node:net';
import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { parseEnvBool } from './env-bool';
import { readNamespace } from './validate-env';

/** Express's 'trust proxy' value: everything, a hop count, or addresses and subnets. */
export type TrustProxy = boolean | number | string[];

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY as Express takes it; undefined when malformed. */
export function parseTrustProxy(raw: string | undefined): TrustProxy | undefined {
  const value = (raw ?? '').trim();
  if (value === '') {
    return false;
  }
  // Digits are a hop count, as Express reads them, not the boolean 1/0.
  if (/^\d+$/.test(value)) {
    return Number(value);
  }
  const flag = parseEnvBool(value);
  if (flag !== undefined) {
    return flag;
  }
  const entries = value.split(',').map((v) => v.trim());
  const valid = entries.every((e) => {
    if (PROXY_NAMES.has(e)) {
      return true;
    }
    const [ip, bits, ...rest] = e.split('/');
    const family = isIP(ip);
    const maxBits = family === 6 ? 128 : 32;
    return (
      family !== 0 &&
      rest.length === 0 &&
      (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits) || isIP(bits) === 4)
    );
  });
  return valid ? entries : undefined;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Server-wide settings: listening, logging, body limits, shutdown and SSE pacing. */
export class AppEnv {
  @Expose() @IsIn(['development', 'production', 'test']) NODE_ENV = 'development';
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @Expose() @IsString() HOST = '0.0.0.0';
  /**
   * Connections the kernel holds for the gateway before it accepts them (capped by
   * net.core.somaxconn). Node's 511 reset some of 5,000 streams opened at once.
   */
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(65535) LISTEN_BACKLOG = 4096;
  @Expose() @IsIn(LOG_LEVELS) LOG_LEVEL: LogLevel = 'info';
  /** Largest accepted request body; a number of bytes or a size such as `10mb`. */
  @Expose()
  @Matches(/^\d+(b|kb|mb|gb)?$/i, { message: 'MAX_BODY_SIZE must be bytes or a size like 10mb' })
  MAX_BODY_SIZE = '10mb';
  @Expose() @Type(() => Number) @IsInt() @Min(0) SHUTDOWN_TIMEOUT_MS = 30_000;
  /** After SIGTERM, how long readiness answers 503 while new connections are still served. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) SHUTDOWN_DRAIN_DELAY_MS = 5_000;
  @Expose() @Type(() => Number) @IsInt() @Min(100) SSE_KEEPALIVE_MS = 15_000;
  /** Comma-separated allowed CORS origins, `*` for any; empty disables CORS. */
  @Expose() @IsOptional() @IsString() CORS_ORIGINS?: string;
  /**
   * The proxies in front of the gateway whose X-Forwarded-* headers are believed, with
   * Express's 'trust proxy' semantics; unset: none.
   */
  @Expose()
  @IsOptional()
  @ValidateBy({
    name: 'trustProxy',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && parseTrustProxy(v) !== undefined,
      defaultMessage: () =>
        'TRUST_PROXY must be true, false, a number of hops, or comma-separated addresses, subnets (10.0.0.0/8) or loopback, linklocal, uniquelocal',
    },
  })
  TRUST_PROXY?: string;
}

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  listenBacklog: number;
  logLevel: LogLevel;
  maxBodySize: string;
  shutdownTimeoutMs: number;
  shutdownDrainDelayMs: number;
  sseKeepaliveMs: number;
  corsOrigins: string[];
  trustProxy: TrustProxy;
}

export const appConfig = registerAs('app', (): AppConfig => {
  const env = readNamespace(AppEnv);
  return {
    nodeEnv: env.NODE_ENV as AppConfig['nodeEnv'],
    port: env.PORT,
    host: env.HOST,
    listenBacklog: env.LISTEN_BACKLOG,
    logLevel: env.LOG_LEVEL,
    maxBodySize: env.MAX_BODY_SIZE.toLowerCase(),
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    shutdownDrainDelayMs: env.SHUTDOWN_DRAIN_DELAY_MS,
    sseKeepaliveMs: env.SSE_KEEPALIVE_MS,
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    trustProxy: parseTrustProxy(env.TRUST_PROXY) ?? false,
  };
});
