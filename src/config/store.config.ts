import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min, ValidateBy } from 'class-validator';
import { EnvBool } from './env-bool';
import { readNamespace } from './validate-env';

/** Where PGlite keeps its files when DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = './data';

const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

export const KEY_STORE_MODES = ['database', 'off'] as const;
export type KeyStoreMode = (typeof KEY_STORE_MODES)[number];

/**
 * The database behind managed keys, budgets and the usage ledger: PostgreSQL when
 * DATABASE_URL is set, otherwise PGlite (in-process PostgreSQL) with its files in DATA_DIR.
 */
export class StoreEnv {
  /** Read here only to know whether a throwaway database is refused (AppEnv validates it). */
  @Expose() NODE_ENV?: string;
  /** `off`: static keys only, no ledger, no admin API (stateless deployments, tests). */
  @Expose() @IsIn(KEY_STORE_MODES) KEY_STORE: KeyStoreMode = 'database';
  /**
   * Required in production unless DATA_DIR is set: a pod must not quietly keep keys and
   * the ledger in an embedded database inside its own (throwaway) filesystem.
   */
  @Expose()
  @ValidateBy({
    name: 'databaseUrl',
    validator: {
      validate: (v: unknown, args) =>
        v === undefined
          ? !needsDatabaseUrl(args?.object as StoreEnv)
          : typeof v === 'string' && POSTGRES_URL.test(v),
      defaultMessage: (args) =>
        args?.value === undefined
          ? 'DATABASE_URL must be set when NODE_ENV=production: without it keys and the usage ledger go to an embedded database in ./data, lost with the container. Set DATABASE_URL to your PostgreSQL (postgres://…), or set DATA_DIR explicitly to a persistent volume for the embedded database (one replica only), or KEY_STORE=off for static keys without a ledger'
          : 'DATABASE_URL must be a postgres:// or postgresql:// URL',
    },
  })
  DATABASE_URL?: string;
  /** PGlite's folder when DATABASE_URL is unset (default ./data); `memory://` keeps nothing. */
  @Expose() @IsOptional() @IsString() DATA_DIR?: string;
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(100) DATABASE_POOL_SIZE = 5;
  /** Backstop re-validation age of a cached key; invalidations normally arrive at once. */
  @Expose() @Type(() => Number) @IsInt() @Min(100) KEY_CACHE_TTL_MS = 10_000;
  /** How long a secret found in no key is answered 401 without a read (0: not remembered). */
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(600_000) KEY_NEGATIVE_CACHE_TTL_MS = 30_000;
  /** Unknown secrets remembered at most per replica, oldest forgotten first. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) KEY_NEGATIVE_CACHE_MAX = 10_000;
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
  /** Largest Responses API response (input items and answer, as JSON) the gateway stores. */
  @Expose() @Type(() => Number) @IsInt() @Min(1_024) RESPONSES_STORE_MAX_BYTES = 4_194_304;
  /** How long a stored response is kept (OpenAI keeps them 30 days). */
  @Expose() @Type(() => Number) @IsInt() @Min(1) RESPONSES_RETENTION_DAYS = 30;
  /** Most responses one `previous_response_id` chain may rebuild (400 past it). */
  @Expose() @Type(() => Number) @IsInt() @Min(1) RESPONSES_CHAIN_MAX_DEPTH = 1_000;
  /** Most bytes of stored JSON one rebuilt conversation may read (400 past it). */
  @Expose() @Type(() => Number) @IsInt() @Min(1_024) RESPONSES_CHAIN_MAX_BYTES = 33_554_432;
  /** How often expired stored responses are deleted. */
  @Expose() @Type(() => Number) @IsInt() @Min(1_000) RESPONSES_SWEEP_INTERVAL_MS = 3_600_000;
}

/** Production with the key store on and neither DATABASE_URL nor DATA_DIR: refused. */
function needsDatabaseUrl(env: StoreEnv): boolean {
  return env.NODE_ENV === 'production' && env.KEY_STORE !== 'off' && env.DATA_DIR === undefined;
}

export interface StoreConfig {
  mode: KeyStoreMode;
  databaseUrl?: string;
  dataDir: string;
  /** Whether DATA_DIR was set, rather than defaulted. */
  dataDirSet: boolean;
  poolSize: number;
  keyCacheTtlMs: number;
  negativeCacheTtlMs: number;
  negativeCacheMax: number;
  retentionDays: number;
  flushIntervalMs: number;
  bufferMaxRows: number;
  budgetCountsProtections: boolean;
  budgetReservationTtlMs: number;
  /** The gateway's own store of Responses API responses. */
  responses: {
    maxBytes: number;
    retentionDays: number;
    chainMaxDepth: number;
    chainMaxBytes: number;
    sweepIntervalMs: number;
  };
}

export const storeConfig = registerAs('store', (): StoreConfig => {
  const env = readNamespace(StoreEnv);
  return {
    mode: env.KEY_STORE,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR ?? DEFAULT_DATA_DIR,
    dataDirSet: env.DATA_DIR !== undefined,
    poolSize: env.DATABASE_POOL_SIZE,
    keyCacheTtlMs: env.KEY_CACHE_TTL_MS,
    negativeCacheTtlMs: env.KEY_NEGATIVE_CACHE_TTL_MS,
    negativeCacheMax: env.KEY_NEGATIVE_CACHE_MAX,
    retentionDays: env.USAGE_RETENTION_DAYS,
    flushIntervalMs: env.USAGE_FLUSH_INTERVAL_MS,
    bufferMaxRows: env.USAGE_BUFFER_MAX_ROWS,
    budgetCountsProtections: env.BUDGET_COUNT_PROTECTIONS,
    budgetReservationTtlMs: env.BUDGET_RESERVATION_TTL_MS,
    responses: {
      maxBytes: env.RESPONSES_STORE_MAX_BYTES,
      retentionDays: env.RESPONSES_RETENTION_DAYS,
      chainMaxDepth: env.RESPONSES_CHAIN_MAX_DEPTH,
      chainMaxBytes: env.RESPONSES_CHAIN_MAX_BYTES,
      sweepIntervalMs: env.RESPONSES_SWEEP_INTERVAL_MS,
    },
  };
});
