import type { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';

/** Upstream settings for specs: short timeouts, the production caps unless overridden. */
export function fakeUpstreamSettings(
  overrides: Partial<AllConfig['upstream']> = {},
): AllConfig['upstream'] {
  return {
    connectTimeoutMs: 1000,
    headersTimeoutMs: 5000,
    bodyTimeoutMs: 5000,
    maxConnections: 0,
    keepAliveTimeoutMs: 1000,
    maxAnswerBytes: 32 * 1024 * 1024,
    maxEventBytes: 8 * 1024 * 1024,
    streamHoldMs: 5000,
    totalTimeoutMs: 30_000,
    retryAttempts: 1,
    retryBackoffMs: 0,
    retryMaxBackoffMs: 0,
    retryBudgetPercent: 20,
    ejectConsecutiveFailures: 5,
    ejectCooldownMs: 1000,
    ejectMaxCooldownMs: 10_000,
    ...overrides,
  };
}

/** A ConfigService-like fake holding only the `upstream` namespace. */
export function fakeUpstreamConfig(
  overrides: Partial<AllConfig['upstream']> = {},
): ConfigService<AllConfig, true> {
  const upstream = fakeUpstreamSettings(overrides);
  return {
    get: (ns: keyof AllConfig) => (ns === 'upstream' ? upstream : undefined),
  } as unknown as ConfigService<AllConfig, true>;
}
