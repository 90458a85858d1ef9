import { Type } from 'class-transformer';
import 'reflect-metadata';
import {
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

/**
 * The catalog file's schema (snake_case, as written in YAML), validated at boot with
 * class-validator. CatalogLoader turns it into the runtime types in catalog.types.ts.
 */

export const ENDPOINTS = ['chat_completions', 'responses', 'messages'] as const;

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** Retries of one upstream call (see src/resilience); unset keys come from the environment. */
export class RetrySchema {
  /** Upstream attempts in all, the first included (1 = no retry). */
  @IsOptional() @IsInt() @Min(1) attempts?: number;
  @IsOptional() @IsInt() @Min(0) backoff_ms?: number;
  @IsOptional() @IsInt() @Min(0) max_backoff_ms?: number;
}

/** Deadlines of one upstream call; unset keys come from the environment. */
export class TimeoutsSchema {
  @IsOptional() @IsInt() @Min(1) connect_ms?: number;
  @IsOptional() @IsInt() @Min(1) first_byte_ms?: number;
  @IsOptional() @IsInt() @Min(1) idle_ms?: number;
  @IsOptional() @IsInt() @Min(1) total_ms?: number;
}

/** A deployment's own limits (see src/resilience/deployment-limiter.ts). */
export class DeploymentLimitsSchema {
  @IsOptional() @IsInt() @Min(1) max_concurrent?: number;
  @IsOptional() @IsInt() @Min(1) requests_per_minute?: number;
  @IsOptional() @IsInt() @Min(1) tokens_per_minute?: number;
}

/** One deployment of a model: a provider entry and the model id it knows it by. */
export class DeploymentSchema {
  @IsString() @IsNotEmpty() provider!: string;
  @IsOptional() @IsString() @IsNotEmpty() upstream_id?: string;
  @IsOptional() @IsNumber() @Min(0) weight?: number;
  @IsOptional()
  @ValidateNested()
  @Type(() => DeploymentLimitsSchema)
  limits?: DeploymentLimitsSchema;
}

export class ProviderSchema {
  @IsString() @Matches(/^[a-z0-9][a-z0-9._-]*$/i) name!: string;
  /** Checked against the registered provider kinds by the loader. */
  @IsString() @Matches(/^[a-z][a-z0-9-]*$/) kind!: string;
  /** Default base URL; `base_url_env` overrides it when that variable is set. */
  @IsOptional() @IsString() @Matches(/^https?:\/\/\S+$/) base_url?: string;
  @IsOptional() @Matches(ENV_NAME) base_url_env?: string;
  /** Name of the environment variable holding the API key (never the key itself). */
  @IsOptional() @Matches(ENV_NAME) api_key_env?: string;
  @IsOptional() @IsObject() headers?: Record<string, string>;
  @IsOptional() @ValidateNested() @Type(() => RetrySchema) retry?: RetrySchema;
  @IsOptional() @ValidateNested() @Type(() => TimeoutsSchema) timeouts?: TimeoutsSchema;
}

export class PricingSchema {
  @IsNumber() @Min(0) input!: number;
  @IsNumber() @Min(0) output!: number;
  @IsOptional() @IsNumber() @Min(0) cached_input?: number;
  @IsOptional() @IsNumber() @Min(0) cache_write?: number;
}

export class CapabilitiesSchema {
  @IsOptional() @IsBoolean() reasoning?: boolean;
  @IsOptional() @IsBoolean() tools?: boolean;
  @IsOptional() @IsBoolean() vision?: boolean;
}

/** A model's response cache (see src/cache). */
export class ModelCacheSchema {
  /** How long an answer is replayed; 0 turns the cache off for the model. */
  @IsInt() @Min(0) @Max(31_536_000) ttl_s!: number;
}

export class ModelSchema {
  @IsString()
  @IsNotEmpty()
  @Matches(/^[^\s/?#]+$/, { message: 'id must not contain spaces, /, ? or #' })
  id!: string;
  /** One deployment's provider; `deployments` lists several instead (one of the two is required). */
  @IsOptional() @IsString() @IsNotEmpty() provider?: string;
  @IsOptional() @IsString() @IsNotEmpty() upstream_id?: string;
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ValidateNested({ each: true })
  @Type(() => DeploymentSchema)
  deployments?: DeploymentSchema[];
  /** Models tried in order when this one cannot serve (see src/resilience). */
  @IsOptional() @IsArray() @ArrayUnique() @IsString({ each: true }) fallbacks?: string[];
  @IsOptional() @ValidateNested() @Type(() => RetrySchema) retry?: RetrySchema;
  @IsOptional() @ValidateNested() @Type(() => TimeoutsSchema) timeouts?: TimeoutsSchema;
  /** Replays identical requests' answers (overrides RESPONSE_CACHE_TTL_S for the model). */
  @IsOptional() @ValidateNested() @Type(() => ModelCacheSchema) cache?: ModelCacheSchema;
  @IsString() @Matches(/^[a-z0-9-]+$/) family!: string;
  @IsOptional() @IsString() display_name?: string;
  /** Release date (YYYY-MM-DD), shown as `created` / `created_at`. */
  @IsOptional() @Matches(/^\d{4}-\d{2}-\d{2}$/) created?: string;
  @IsInt() @Min(1) context_window!: number;
  @IsInt() @Min(1) max_output_tokens!: number;
  @ValidateNested() @Type(() => PricingSchema) pricing!: PricingSchema;
  @IsOptional() @ValidateNested() @Type(() => CapabilitiesSchema) capabilities?: CapabilitiesSchema;
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(ENDPOINTS, { each: true })
  endpoints?: (typeof ENDPOINTS)[number][];
  /**
   * Prompt-cache breakpoints the gateway places on translated requests to an Anthropic
   * upstream that carry none (chat and Responses clients): `auto` (default) or `off`.
   */
  @IsOptional() @IsIn(['auto', 'off']) cache_breakpoints?: 'auto' | 'off';
  /** Upstream API used for this model; checked against, and defaulted from, the provider kind. */
  @IsOptional() @IsString() @IsNotEmpty() upstream_api?: string;
}

export class CatalogFileSchema {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ProviderSchema)
  providers!: ProviderSchema[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => ModelSchema) models!: ModelSchema[];
}
