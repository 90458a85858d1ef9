import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  Max,
  Min,
  IsString,
  IsUrl,
  Matches,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { EnvBool } from './env-bool';
import { readNamespace } from './validate-env';

/** The web console (/console): where it is served and how its sessions are signed. */
export class ConsoleEnv {
  /** Read here only to know whether a per-process session secret is refused. */
  @Expose() NODE_ENV?: string;
  @Expose() @EnvBool() CONSOLE_ENABLED = true;
  @Expose()
  @IsOptional()
  @Matches(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/, {
    message: 'CONSOLE_PATH must be an absolute path such as /console',
  })
  CONSOLE_PATH?: string;
  /**
   * Signs session cookies; random per process when unset (sessions end at restart, and
   * another replica refuses them), which production does not accept with the console on.
   */
  @Expose()
  @ValidateBy({
    name: 'sessionSecret',
    validator: {
      validate: (v: unknown, args) =>
        v === undefined
          ? !needsSessionSecret(args?.object as ConsoleEnv)
          : typeof v === 'string' && v.length >= 32,
      defaultMessage: (args) =>
        args?.value === undefined
          ? 'CONSOLE_SESSION_SECRET must be set when NODE_ENV=production and the console is on (CONSOLE_ENABLED, on by default): without it each replica signs sessions with its own random secret, so a sign-in works on one replica only and ends at every restart. Set it to the same random value of at least 32 characters on every replica (openssl rand -base64 48), or CONSOLE_ENABLED=false'
          : 'CONSOLE_SESSION_SECRET must be at least 32 characters',
    },
  })
  CONSOLE_SESSION_SECRET?: string;
  /**
   * The gateway's public origin (https://llm.example.com), for the OIDC redirect URI when
   * the Host the gateway sees is not the one browsers use.
   */
  @Expose()
  @IsOptional()
  @ValidateBy({
    name: 'origin',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && publicOrigin(v) !== undefined,
      defaultMessage: () =>
        'CONSOLE_PUBLIC_URL must be an http(s) origin such as https://llm.example.com, without a path',
    },
  })
  CONSOLE_PUBLIC_URL?: string;
  /** OpenID Connect issuer URL; unset: sign-in with the admin token only. */
  @Expose() @IsOptional() @IsUrl({ require_tld: false }) CONSOLE_OIDC_ISSUER?: string;
  @Expose()
  @ValidateIf((env: ConsoleEnv) => env.CONSOLE_OIDC_ISSUER !== undefined)
  @IsString()
  CONSOLE_OIDC_CLIENT_ID?: string;
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_CLIENT_SECRET?: string;
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_SCOPES?: string;
  /**
   * Comma-separated e-mails signed in as admin (any letter case), honoured only when the
   * ID token says `email_verified: true`.
   */
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_ADMIN_EMAILS?: string;
  /** Comma-separated subjects (`sub` claims, exact) signed in as admin. */
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_ADMIN_SUBJECTS?: string;
  /** Comma-separated groups (from the groups claim) signed in as admin. */
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_ADMIN_GROUPS?: string;
  /** A boolean claim that makes its holder an admin. */
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_ADMIN_CLAIM?: string;
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_GROUPS_CLAIM?: string;
  /** The claim naming a member's team (a key's owner). */
  @Expose() @IsOptional() @IsString() CONSOLE_OIDC_TEAM_CLAIM?: string;
  /** Failed sign-ins (admin token, one-time link) a client address gets before a lockout. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(1000) CONSOLE_SIGNIN_MAX_FAILURES = 5;
  /** The first lockout; each further failure doubles it, up to the maximum. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(86_400) CONSOLE_SIGNIN_LOCKOUT_SECONDS = 30;
  @Expose()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(604_800)
  CONSOLE_SIGNIN_LOCKOUT_MAX_SECONDS = 3600;
}

/** Sign-in throttling per client address. */
export interface SigninThrottleConfig {
  maxFailures: number;
  lockoutSeconds: number;
  maxLockoutSeconds: number;
}

/** Production with the console on and no shared secret: refused. */
function needsSessionSecret(env: ConsoleEnv): boolean {
  // CONSOLE_ENABLED is null when malformed: that is reported on its own, not guessed here.
  return env.NODE_ENV === 'production' && env.CONSOLE_ENABLED === true;
}

/** Corporate sign-in settings (present when CONSOLE_OIDC_ISSUER is set). */
export interface ConsoleOidcConfig {
  issuer: string;
  clientId: string;
  /** Never logged. */
  clientSecret?: string;
  scopes: string;
  /** Lower-cased; matched only against a verified e-mail. */
  adminEmails: string[];
  adminSubjects: string[];
  adminGroups: string[];
  adminClaim?: string;
  groupsClaim: string;
  teamClaim: string;
}

/** `scheme://host[:port]` of an http(s) URL without path, query or fragment. */
function publicOrigin(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const bare = url.pathname === '/' && url.search === '' && url.hash === '';
  return /^https?:$/.test(url.protocol) && bare && url.username === '' ? url.origin : undefined;
}

const csv = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface ConsoleConfig {
  enabled: boolean;
  /** Normalized: leading slash, no trailing slash. */
  path: string;
  /** Never logged. */
  sessionSecret?: string;
  /** Origin browsers reach the gateway at, when configured (no trailing slash). */
  publicUrl?: string;
  oidc?: ConsoleOidcConfig;
  throttle: SigninThrottleConfig;
}

export const consoleConfig = registerAs('console', (): ConsoleConfig => {
  const env = readNamespace(ConsoleEnv);
  return {
    enabled: env.CONSOLE_ENABLED,
    path: (env.CONSOLE_PATH ?? '/console').replace(/\/+$/, ''),
    sessionSecret: env.CONSOLE_SESSION_SECRET,
    publicUrl:
      env.CONSOLE_PUBLIC_URL === undefined ? undefined : publicOrigin(env.CONSOLE_PUBLIC_URL),
    oidc:
      env.CONSOLE_OIDC_ISSUER === undefined || env.CONSOLE_OIDC_CLIENT_ID === undefined
        ? undefined
        : {
            issuer: env.CONSOLE_OIDC_ISSUER,
            clientId: env.CONSOLE_OIDC_CLIENT_ID,
            clientSecret: env.CONSOLE_OIDC_CLIENT_SECRET,
            scopes: env.CONSOLE_OIDC_SCOPES ?? 'openid email profile',
            adminEmails: csv(env.CONSOLE_OIDC_ADMIN_EMAILS).map((e) => e.toLowerCase()),
            adminSubjects: csv(env.CONSOLE_OIDC_ADMIN_SUBJECTS),
            adminGroups: csv(env.CONSOLE_OIDC_ADMIN_GROUPS),
            adminClaim: env.CONSOLE_OIDC_ADMIN_CLAIM,
            groupsClaim: env.CONSOLE_OIDC_GROUPS_CLAIM ?? 'groups',
            teamClaim: env.CONSOLE_OIDC_TEAM_CLAIM ?? 'team',
          },
    throttle: {
      maxFailures: env.CONSOLE_SIGNIN_MAX_FAILURES,
      lockoutSeconds: env.CONSOLE_SIGNIN_LOCKOUT_SECONDS,
      maxLockoutSeconds: Math.max(
        env.CONSOLE_SIGNIN_LOCKOUT_MAX_SECONDS,
        env.CONSOLE_SIGNIN_LOCKOUT_SECONDS,
      ),
    },
  };
});
