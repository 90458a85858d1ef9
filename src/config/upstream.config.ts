import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, IsOptional, IsUrl, Min } from 'class-validator';
import { readNamespace } from './validate-env';

const URL_OPTS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };
const MB = 1024 * 1024;

/** Upstream HTTP behaviour, and the provider endpoints the shipped catalog reads. */
export class UpstreamEnv {
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;
  /**
   * Time to the upstream's response headers; a non-streamed answer arrives whole, so this
   * bounds its generation. Half the official SDKs' 10-minute request timeout: a client
   * gets the gateway's 504 before its own SDK gives up.
   */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_HEADERS_TIMEOUT_MS = 300_000;
  /** Longest silence allowed between two chunks of an upstream body. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_BODY_TIMEOUT_MS = 120_000;
  /** Connections per upstream origin; 0 means no cap, so streams never queue. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_MAX_CONNECTIONS = 0;
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_KEEPALIVE_TIMEOUT_MS = 60_000;
  /** Largest non-streamed upstream answer; a larger one is aborted with a 502. */
  @Expose() @Type(() => Number) @IsInt() @Min(1024) UPSTREAM_MAX_ANSWER_BYTES = 32 * MB;
  /** Largest single event of an upstream stream; a larger one ends the stream in error. */
  @Expose() @Type(() => Number) @IsInt() @Min(1024) UPSTREAM_MAX_EVENT_BYTES = 8 * MB;
  /**
   * How long a streamed request waits for the upstream's first event with nothing sent:
   * until then an upstream error keeps its own HTTP status; after it the gateway commits
   * `200 text/event-stream` and sends `: keepalive` comments (every SSE_KEEPALIVE_MS), so
   * idle timeouts of proxies in front of it do not fire, and later errors become the
   * format's in-stream error event.
   */
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_STREAM_HOLD_MS = 5_000;
  /** Deadline of one upstream attempt, first byte to last; catalog `timeouts.total_ms` overrides it. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_TOTAL_TIMEOUT_MS = 600_000;
  /** Upstream attempts per deployment chain (1 = no retry); catalog `retry.attempts` overrides it. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_RETRY_ATTEMPTS = 3;
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_RETRY_BACKOFF_MS = 200;
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_RETRY_MAX_BACKOFF_MS = 5_000;
  /** Retries in flight as a share of requests in flight (Envoy's retry budget), in percent. */
  @Expose() @Type(() => Number) @IsInt() @Min(0) UPSTREAM_RETRY_BUDGET_PERCENT = 20;
  /** Consecutive retryable failures that eject a deployment. */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_EJECT_CONSECUTIVE_FAILURES = 5;
  /** First ejection's cooldown (doubling on each further ejection, up to the max). */
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_EJECT_COOLDOWN_MS = 5_000;
  @Expose() @Type(() => Number) @IsInt() @Min(1) UPSTREAM_EJECT_MAX_COOLDOWN_MS = 300_000;
  @Expose() @IsOptional() @IsUrl(URL_OPTS) OPENAI_BASE_URL?: string;
  @Expose() @IsOptional() @IsUrl(URL_OPTS) ANTHROPIC_BASE_URL?: string;
}

export interface UpstreamConfig {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxConnections: number;
  keepAliveTimeoutMs: number;
  maxAnswerBytes: number;
  maxEventBytes: number;
  streamHoldMs: number;
  totalTimeoutMs: number;
  retryAttempts: number;
  retryBackoffMs: number;
  retryMaxBackoffMs: number;
  retryBudgetPercent: number;
  ejectConsecutiveFailures: number;
  ejectCooldownMs: number;
  ejectMaxCooldownMs: number;
}

export const upstreamConfig = registerAs('upstream', (): UpstreamConfig => {
  const env = readNamespace(UpstreamEnv);
  return {
    connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: env.UPSTREAM_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: env.UPSTREAM_BODY_TIMEOUT_MS,
    maxConnections: env.UPSTREAM_MAX_CONNECTIONS,
    keepAliveTimeoutMs: env.UPSTREAM_KEEPALIVE_TIMEOUT_MS,
    maxAnswerBytes: env.UPSTREAM_MAX_ANSWER_BYTES,
    maxEventBytes: env.UPSTREAM_MAX_EVENT_BYTES,
    streamHoldMs: env.UPSTREAM_STREAM_HOLD_MS,
    totalTimeoutMs: env.UPSTREAM_TOTAL_TIMEOUT_MS,
    retryAttempts: env.UPSTREAM_RETRY_ATTEMPTS,
    retryBackoffMs: env.UPSTREAM_RETRY_BACKOFF_MS,
    retryMaxBackoffMs: env.UPSTREAM_RETRY_MAX_BACKOFF_MS,
    retryBudgetPercent: env.UPSTREAM_RETRY_BUDGET_PERCENT,
    ejectConsecutiveFailures: env.UPSTREAM_EJECT_CONSECUTIVE_FAILURES,
    ejectCooldownMs: env.UPSTREAM_EJECT_COOLDOWN_MS,
    ejectMaxCooldownMs: env.UPSTREAM_EJECT_MAX_COOLDOWN_MS,
  };
});
