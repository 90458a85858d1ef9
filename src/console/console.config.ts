import { registerAs } from '@nestjs/config';
import { Expose, Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { readNamespace } from '../config/validate-env';

/** The web console (/console): where it is served and how its sessions are signed. */
export class ConsoleEnv {
  @Expose()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? !/^(0|false|off|no)$/i.test(value) : value !== false,
  )
  @IsBoolean()
  CONSOLE_ENABLED = true;
  @Expose()
  @IsOptional()
  @Matches(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/, {
    message: 'CONSOLE_PATH must be an absolute path such as /console',
  })
  CONSOLE_PATH?: string;
  /** Signs session cookies; random per process when unset (sessions end at restart). */
  @Expose()
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'CONSOLE_SESSION_SECRET must be at least 32 characters' })
  CONSOLE_SESSION_SECRET?: string;
}

export interface ConsoleConfig {
  enabled: boolean;
  /** Normalized: leading slash, no trailing slash. */
  path: string;
  /** Never logged. */
  sessionSecret?: string;
}

export const consoleConfig = registerAs('console', (): ConsoleConfig => {
  const env = readNamespace(ConsoleEnv);
  return {
    enabled: env.CONSOLE_ENABLED,
    path: (env.CONSOLE_PATH ?? '/console').replace(/\/+$/, ''),
    sessionSecret: env.CONSOLE_SESSION_SECRET,
  };
});
