import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { EnvBool } from './env-bool';
import { readNamespace } from './validate-env';

export const KEY_STORE_MODES = ['database', 'off'] as const;
export type KeyStoreMode = (typeof KEY_STORE_MODES)[number];

/**
 * The database behind managed keys, budgets and the usage ledger: PostgreSQL when
 * DATABASE_URL is set, otherwise PGlite (in-process PostgreSQL) with its files in DATA_DIR.
 */
export class StoreEnv {
  /** `off`: static keys only, no ledger, no admin API (stateless deployments, tests). */
  @Expose() @IsIn(KEY_STORE_MODES) KEY_STORE: KeyStoreMode = 'database';
  @Expose()
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_URL must be a postgres:// or postgresql:// URL',
  })
  DATABASE_URL?: string;
  /** PGlite's folder when DATABASE_URL is unset; `memory://` keeps nothing on disk. */
  @Expose() @IsString() DATA_DIR = './data';
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(100) DATABASE_POOL_SIZE = 5;
  /** Backstop re-validation age of a cached key; invalidations normally arrive at once. */
  @Expose() @Type(() => Number) @IsInt() @Min(100) KEY_CACHE_TTL_MS = 10_000;
  @Expose() @Type(() => Number) @IsInt() @Min(1) USAGE_RETENTION_DAYS = 90;
  @Expose() @Type(() => Number) @IsInt() @Min(10) @Max(60_000) USAGE_FLUSH_INTERVAL_MS = 200;
  /** Ledger rows held in memory while the database is unreachable; more are dropped (counted). */
  @Expose() @Type(() => Number) @IsInt() @Min(100) USAGE_BUFFER_MAX_ROWS = 100_000;
  /** Whether protection judge calls count against the client key's budget. */
  @Expose() @EnvBool() BUDGET_COUNT_PROTECTIONS = false;
  /**
   * How long a budget reservation counts when its request never settles it (the replica
   * died); longer than any request may run.
   */
  @Expose() @Type(() => Number) @IsInt() @Min(1_000) BUDGET_RESERVATION_TTL_MS = 600_000;
}

export interface StoreConfig {
  mode: KeyStoreMode;
  databaseUrl?: string;
  dataDir: string;
  poolSize: number;
  keyCacheTtlMs: number;
  retentionDays: number;
  flushIntervalMs: number;
  bufferMaxRows: number;
  budgetCountsProtections: boolean;
  budgetReservationTtlMs: number;
}

export const storeConfig = registerAs('store', (): StoreConfig => {
  const env = readNamespace(StoreEnv);
  return {
    mode: env.KEY_STORE,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    poolSize: env.DATABASE_POOL_SIZE,
    keyCacheTtlMs: env.KEY_CACHE_TTL_MS,
    retentionDays: env.USAGE_RETENTION_DAYS,
    flushIntervalMs: env.USAGE_FLUSH_INTERVAL_MS,
    bufferMaxRows: env.USAGE_BUFFER_MAX_ROWS,
    budgetCountsProtections: env.BUDGET_COUNT_PROTECTIONS,
    budgetReservationTtlMs: env.BUDGET_RESERVATION_TTL_MS,
  };
});
