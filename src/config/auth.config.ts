import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { readNamespace } from './validate-env';

/** Client keys accepted by the gateway. */
export class AuthEnv {
  @Expose() NODE_ENV?: string;
  /** Read here only to know whether keys can be issued (validated by the store's namespace). */
  @Expose() KEY_STORE?: string;
  @Expose() CONSOLE_OIDC_ISSUER?: string;
  /**
   * Comma-separated client keys; required when NODE_ENV=production unless keys come from a
   * keys file or can be issued (the key store on, with the admin token or console sign-in).
   */
  @Expose()
  @ValidateIf(
    (env: AuthEnv) =>
      (env.NODE_ENV === 'production' && env.GATEWAY_KEYS_FILE === undefined && !issuesKeys(env)) ||
      env.GATEWAY_API_KEYS !== undefined,
  )
  @IsString()
  @Matches(/[^,\s]/, { message: 'GATEWAY_API_KEYS must list at least one key' })
  GATEWAY_API_KEYS?: string;
  @Expose() @IsOptional() @IsString() GATEWAY_DEV_API_KEY?: string;
  /** YAML file of client keys (as SHA-256 hashes or variable names) with per-key limits. */
  @Expose() @IsOptional() @IsString() GATEWAY_KEYS_FILE?: string;
  /** Bearer token of the admin API (/admin/v1); unset disables the API. */
  @Expose()
  @IsOptional()
  @Matches(/^\S{16,}$/, {
    message: 'GATEWAY_ADMIN_TOKEN must be at least 16 characters, no spaces',
  })
  GATEWAY_ADMIN_TOKEN?: string;
  /**
   * Failed authentications with keys of the issued shape per client address and window,
   * past which that address's keys are checked against the cache only (429 otherwise); 0: off.
   */
  @Expose() @Type(() => Number) @IsInt() @Min(0) AUTH_FAILURE_LIMIT = 50;
  @Expose() @Type(() => Number) @IsInt() @Min(1000) @Max(3_600_000) AUTH_FAILURE_WINDOW_MS = 60_000;
}

/** Whether a production gateway can issue its own keys, so that it needs no static one. */
function issuesKeys(env: AuthEnv): boolean {
  return (
    env.KEY_STORE !== 'off' &&
    (env.GATEWAY_ADMIN_TOKEN !== undefined || env.CONSOLE_OIDC_ISSUER !== undefined)
  );
}

export interface AuthConfig {
  apiKeys: string[];
  /** Key to use when none are configured outside production (random when unset). */
  devApiKey?: string;
  /** Path of the keys file, when one is configured. */
  keysFile?: string;
  /** Token of the admin API; undefined when the API is disabled. Never logged. */
  adminToken?: string;
  /** Failed authentications per client address and window before the throttle (0: off). */
  failureLimit?: number;
  failureWindowMs?: number;
}

export const authConfig = registerAs('auth', (): AuthConfig => {
  const env = readNamespace(AuthEnv);
  return {
    apiKeys: (env.GATEWAY_API_KEYS ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    devApiKey: env.GATEWAY_DEV_API_KEY,
    keysFile: env.GATEWAY_KEYS_FILE,
    adminToken: env.GATEWAY_ADMIN_TOKEN,
    failureLimit: env.AUTH_FAILURE_LIMIT,
    failureWindowMs: env.AUTH_FAILURE_WINDOW_MS,
  };
});
