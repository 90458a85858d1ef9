import { ConfigModule } from '@nestjs/config';
import type { DynamicModule } from '@nestjs/common';
import { AppConfig, AppEnv, appConfig } from './app.config';
import { AuthConfig, AuthEnv, authConfig } from './auth.config';
import { CatalogConfig, CatalogEnv, catalogConfig } from './catalog.config';
import { LimitsConfig, LimitsEnv, limitsConfig } from './limits.config';
import { ProtectionsConfig, ProtectionsEnv, protectionsConfig } from './protections.config';
import { StoreConfig, StoreEnv, storeConfig } from './store.config';
import { UpstreamConfig, UpstreamEnv, upstreamConfig } from './upstream.config';
import { ConsoleConfig, ConsoleEnv, consoleConfig } from './console.config';
import { AuditConfig, AuditEnv, auditConfig } from './audit.config';
import { collectEnvProblems } from './validate-env';

/** Every typed config namespace, for `ConfigService<AllConfig, true>`. */
export interface AllConfig {
  app: AppConfig;
  auth: AuthConfig;
  catalog: CatalogConfig;
  upstream: UpstreamConfig;
  limits: LimitsConfig;
  protections: ProtectionsConfig;
  store: StoreConfig;
  console: ConsoleConfig;
  audit: AuditConfig;
}

/** Thrown at boot with every invalid variable listed. */
export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigValidationError';
  }
}

export function validateEnvironment(env: Record<string, unknown>): Record<string, unknown> {
  const problems = collectEnvProblems(
    [
      AppEnv,
      AuthEnv,
      CatalogEnv,
      UpstreamEnv,
      LimitsEnv,
      ProtectionsEnv,
      StoreEnv,
      ConsoleEnv,
      AuditEnv,
    ],
    env,
  );
  if (problems.length > 0) {
    throw new ConfigValidationError(problems);
  }
  return env;
}

/** The root config module: validated at boot, global, typed namespaces. */
export function gatewayConfigModule(): Promise<DynamicModule> {
  return ConfigModule.forRoot({
    isGlobal: true,
    cache: true,
    ignoreEnvFile: true,
    load: [
      appConfig,
      authConfig,
      catalogConfig,
      upstreamConfig,
      limitsConfig,
      protectionsConfig,
      storeConfig,
      consoleConfig,
      auditConfig,
    ],
    validate: validateEnvironment,
  });
}

export type {
  AppConfig,
  AuditConfig,
  ConsoleConfig,
  AuthConfig,
  CatalogConfig,
  LimitsConfig,
  ProtectionsConfig,
  StoreConfig,
  UpstreamConfig,
};
