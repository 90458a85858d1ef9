import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import {
  IsIn,
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
  /** Default injection detector backend: `local`, `http` or `judge` (checked at boot). */
  @Expose()
  @Matches(/^[a-z][a-z0-9_]*$/, { message: 'PROMPT_INJECTION_DETECTOR must be a backend name' })
  PROMPT_INJECTION_DETECTOR = 'local';
  /** Deadline of a remote detector backend's calls for one request. */
  @Expose()
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(60_000)
  PROMPT_INJECTION_DETECTOR_TIMEOUT_MS = 2000;
  /** When a remote backend fails: `open` (the local model decides) or `closed` (a 503). */
  @Expose() @IsIn(['open', 'closed']) PROMPT_INJECTION_FAIL_MODE: 'open' | 'closed' = 'open';
  /** Remote verdicts kept per process for identical text (LRU entries; 0 turns it off). */
  @Expose()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  PROMPT_INJECTION_CACHE_SIZE = 10_000;
  /** The HTTP classifier backend's endpoint (TEI `/predict`, KServe v2 `/infer`, or JSON). */
  @Expose()
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'PROMPT_INJECTION_HTTP_URL must be an http(s) URL' })
  PROMPT_INJECTION_HTTP_URL?: string;
  @Expose()
  @IsIn(['tei', 'kserve', 'json'])
  PROMPT_INJECTION_HTTP_FORMAT: 'tei' | 'kserve' | 'json' = 'tei';
  /** Labels (case-insensitive, comma-separated) that mean injection in TEI/JSON answers. */
  @Expose() @IsString() PROMPT_INJECTION_HTTP_LABELS =
    'INJECTION,MALICIOUS,JAILBREAK,UNSAFE,LABEL_1';
  /** KServe v2: index of the injection class in each output row; name of the input tensor. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(1000) PROMPT_INJECTION_HTTP_CLASS_INDEX = 1;
  @Expose() @IsString() PROMPT_INJECTION_HTTP_INPUT_NAME = 'text';
  /** Sent as `Authorization: Bearer …` to the classifier; never logged. */
  @Expose() @IsOptional() @IsString() PROMPT_INJECTION_HTTP_API_KEY?: string;
  /** Longest piece of text sent in one input; longer parts go as overlapping chunks. */
  @Expose()
  @Type(() => Number)
  @IsInt()
  @Min(200)
  @Max(100_000)
  PROMPT_INJECTION_HTTP_MAX_CHARS = 2000;
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
  promptInjectionDetectors: InjectionDetectorsConfig;
  systemPromptFilterMinOverlap: number;
  shadowAgentModel?: string;
  shadowAgentTimeoutMs: number;
}

/** The pluggable injection detector backends (prompt-injection/backends/). */
export interface InjectionDetectorsConfig {
  /** Backend used when a request names none. */
  defaultBackend: string;
  timeoutMs: number;
  failMode: 'open' | 'closed';
  cacheSize: number;
  http: {
    /** Undefined: the HTTP backend is not configured (a request naming it gets a 400). */
    url?: string;
    format: 'tei' | 'kserve' | 'json';
    labels: string[];
    classIndex: number;
    inputName: string;
    apiKey?: string;
    maxChars: number;
  };
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
    promptInjectionDetectors: {
      defaultBackend: env.PROMPT_INJECTION_DETECTOR,
      timeoutMs: env.PROMPT_INJECTION_DETECTOR_TIMEOUT_MS,
      failMode: env.PROMPT_INJECTION_FAIL_MODE,
      cacheSize: env.PROMPT_INJECTION_CACHE_SIZE,
      http: {
        url: env.PROMPT_INJECTION_HTTP_URL,
        format: env.PROMPT_INJECTION_HTTP_FORMAT,
        labels: env.PROMPT_INJECTION_HTTP_LABELS.split(',')
          .map((l) => l.trim().toLowerCase())
          .filter((l) => l !== ''),
        classIndex: env.PROMPT_INJECTION_HTTP_CLASS_INDEX,
        inputName: env.PROMPT_INJECTION_HTTP_INPUT_NAME,
        apiKey: env.PROMPT_INJECTION_HTTP_API_KEY,
        maxChars: env.PROMPT_INJECTION_HTTP_MAX_CHARS,
      },
    },
    systemPromptFilterMinOverlap: env.SYSTEM_PROMPT_FILTER_MIN_OVERLAP,
    shadowAgentModel: env.SHADOW_AGENT_MODEL,
    shadowAgentTimeoutMs: env.SHADOW_AGENT_TIMEOUT_MS,
  };
});
