import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { readNamespace } from './validate-env';

/** Protections the gateway implements (issue 6); only these may be forced on. */
export const PROTECTION_NAMES = ['prompt_injection_protection'] as const;
export type ProtectionName = (typeof PROTECTION_NAMES)[number];

const FORCE_LIST = new RegExp(
  `^\\s*(${PROTECTION_NAMES.join('|')})(\\s*,\\s*(${PROTECTION_NAMES.join('|')}))*\\s*$`,
);

/**
 * Protections turned on by operators: forced for all traffic (as if every request carried
 * the protection tool with default settings) and the defaults a request's settings override.
 */
export class ProtectionsEnv {
  @Expose()
  @IsOptional()
  @IsString()
  @Matches(FORCE_LIST, {
    message: `PROTECTIONS_FORCE must be a comma-separated list of: ${PROTECTION_NAMES.join(', ')}`,
  })
  PROTECTIONS_FORCE?: string;
  /** Score at or above which a part counts as an injection (0..1). */
  @Expose() @Type(() => Number) @IsNumber() @Min(0) @Max(1) PROMPT_INJECTION_THRESHOLD = 0.5;
}

export interface ProtectionsConfig {
  forced: ProtectionName[];
  promptInjectionThreshold: number;
}

export function parseForced(value: string | undefined): ProtectionName[] {
  if (value === undefined) {
    return [];
  }
  const names = value.split(',').map((s) => s.trim());
  return PROTECTION_NAMES.filter((n) => names.includes(n));
}

export const protectionsConfig = registerAs('protections', (): ProtectionsConfig => {
  const env = readNamespace(ProtectionsEnv);
  return {
    forced: parseForced(env.PROTECTIONS_FORCE),
    promptInjectionThreshold: env.PROMPT_INJECTION_THRESHOLD,
  };
});
