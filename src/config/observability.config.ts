import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { EnvBool } from './env-bool';
import { ConfigValidationError } from './index';
import { collectEnvProblems, readNamespace } from './validate-env';

/**
 * Metrics and tracing settings. Tracing reads the standard `OTEL_*` variables; only the
 * ones that decide whether it is on at all are validated here.
 */
export class ObservabilityEnv {
  /** Bearer token for `GET /metrics` on the main port; unset: not served there. */
  @Expose() @IsOptional() @IsString() @MinLength(16) METRICS_TOKEN?: string;
  /** A separate port serving only `GET /metrics` (no token), e.g. for a cluster scraper; 0 picks a free one. */
  @Expose() @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535) METRICS_PORT?: number;
  /** Host the metrics port listens on. */
  @Expose() @IsString() METRICS_HOST = '0.0.0.0';
  /** Adds a `key_id` label to request, token and cost metrics (cardinality grows with keys). */
  @Expose() @EnvBool() METRICS_PER_KEY = false;
  @Expose() @IsOptional() @IsString() OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @Expose() @IsOptional() @IsString() OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  @Expose() @IsOptional() @IsIn(['otlp', 'none']) OTEL_TRACES_EXPORTER?: string;
  @Expose() @EnvBool() OTEL_SDK_DISABLED = false;
  @Expose() @IsString() OTEL_SERVICE_NAME = 'reasoning-inference-gateway';
}

export interface ObservabilityConfig {
  metricsToken?: string;
  metricsPort?: number;
  metricsHost: string;
  metricsPerKey: boolean;
  /** Tracing is on when an OTLP endpoint is configured and nothing turns it off. */
  tracingEnabled: boolean;
  serviceName: string;
}

/** Derives the namespace from an environment; throws ConfigValidationError when invalid. */
export function readObservabilityConfig(env: NodeJS.ProcessEnv): ObservabilityConfig {
  const problems = collectEnvProblems([ObservabilityEnv], env);
  if (problems.length > 0) {
    throw new ConfigValidationError(problems);
  }
  const e = readNamespace(ObservabilityEnv, env);
  const endpoint = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_ENDPOINT;
  return {
    metricsToken: e.METRICS_TOKEN,
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    metricsPerKey: e.METRICS_PER_KEY,
    tracingEnabled:
      endpoint !== undefined && e.OTEL_TRACES_EXPORTER !== 'none' && !e.OTEL_SDK_DISABLED,
    serviceName: e.OTEL_SERVICE_NAME,
  };
}

/**
 * Registered by ObservabilityModule itself (not the shared config index), so this
 * feature's settings stay in its own module; validated when the module loads.
 */
export const observabilityConfig = registerAs('observability', () =>
  readObservabilityConfig(process.env),
);
