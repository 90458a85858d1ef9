import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { readNamespace } from './validate-env';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Server-wide settings: listening, logging, body limits, shutdown and SSE pacing. */
export class AppEnv {
  @Expose() @IsIn(['development', 'production', 'test']) NODE_ENV = 'development';
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @Expose() @IsString() HOST = '0.0.0.0';
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
}

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  port: number;
  host: string;
  logLevel: LogLevel;
  maxBodySize: string;
  shutdownTimeoutMs: number;
  shutdownDrainDelayMs: number;
  sseKeepaliveMs: number;
  corsOrigins: string[];
}

export const appConfig = registerAs('app', (): AppConfig => {
  const env = readNamespace(AppEnv);
  return {
    nodeEnv: env.NODE_ENV as AppConfig['nodeEnv'],
    port: env.PORT,
    host: env.HOST,
    logLevel: env.LOG_LEVEL,
    maxBodySize: env.MAX_BODY_SIZE.toLowerCase(),
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    shutdownDrainDelayMs: env.SHUTDOWN_DRAIN_DELAY_MS,
    sseKeepaliveMs: env.SSE_KEEPALIVE_MS,
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  };
});
