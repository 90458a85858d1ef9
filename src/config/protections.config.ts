import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import {
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { readNamespace } from './validate-env';

/** A comma-separated list of protection names; the protection registry checks them at boot. */
const FORCE_LIST = /^\s*[a-z][a-z0-9_]*(\s*,\s*[a-z][a-z0-9_]*)*\s*$/;

/**
 * Protections turned on by operators: forced for all traffic (as if every request carried
 * the protection tool with default settings) and the defaults a request's settings override.
 */
export class ProtectionsEnv {
  @Expose()
  @IsOptional()
  @IsString()
  @Matches(FORCE_LIST, {
    message: 'PROTECTIONS_FORCE must be a comma-separated list of protection names',
  })
  PROTECTIONS_FORCE?: string;
  /** Score at or above which a part counts as an injection (0..1). */
  @Expose() @Type(() => Number) @IsNumber() @Min(0) @Max(1) PROMPT_INJECTION_THRESHOLD = 0.5;
  /** Catalog model of the injection detector's second stage, asked only on uncertain scores. */
  @Expose() @IsOptional() @IsString() PROMPT_INJECTION_DETECTOR_MODEL?: string;
  /** Shortest run of system-prompt words in the output that counts as a leak. */
  @Expose() @Type(() => Number) @IsInt() @Min(3) @Max(200) SYSTEM_PROMPT_FILTER_MIN_OVERLAP = 8;
  /**
   * Catalog model that judges answers when a request's `shadow_agent_validation` names none;
   * required when that protection is forced on.
   */
  @Expose()
  @ValidateIf(
    (env: ProtectionsEnv) =>
      env.PROTECTIONS_FORCE?.includes('shadow_agent_validation') === true ||
      env.SHADOW_AGENT_MODEL !== undefined,
  )
  @IsString({
    message:
      'SHADOW_AGENT_MODEL is required when PROTECTIONS_FORCE includes shadow_agent_validation',
  })
  SHADOW_AGENT_MODEL?: string;
  @Expose() @Type(() => Number) @IsInt() @Min(100) @Max(120_000) SHADOW_AGENT_TIMEOUT_MS = 10_000;
}

export interface ProtectionsConfig {
  /** Names of the protections forced on (checked against the registered ones at boot). */
  forced: string[];
  promptInjectionThreshold: number;
  promptInjectionDetectorModel?: string;
  systemPromptFilterMinOverlap: number;
  shadowAgentModel?: string;
  shadowAgentTimeoutMs: number;
}

export function parseForced(value: string | undefined): string[] {
  if (value === undefined) {
    return [];
  }
  return [...new Set(value.split(',').map((s) => s.trim()))].filter((s) => s !== '');
}

export const protectionsConfig = registerAs('protections', (): ProtectionsConfig => {
  const env = readNamespace(ProtectionsEnv);
  return {
    forced: parseForced(env.PROTECTIONS_FORCE),
    promptInjectionThreshold: env.PROMPT_INJECTION_THRESHOLD,
    promptInjectionDetectorModel: env.PROMPT_INJECTION_DETECTOR_MODEL,
    systemPromptFilterMinOverlap: env.SYSTEM_PROMPT_FILTER_MIN_OVERLAP,
    shadowAgentModel: env.SHADOW_AGENT_MODEL,
    shadowAgentTimeoutMs: env.SHADOW_AGENT_TIMEOUT_MS,
  };
});
