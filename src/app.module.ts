import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { CatalogModule } from './catalog/catalog.module';
import { AdminModule } from './admin/admin.module';
import { AuditModule } from './audit/audit.module';
import { ConsoleModule } from './console/console.module';
import { DbModule } from './db/db.module';
import { KeysModule } from './keys/keys.module';
import { OwnershipModule } from './ownership/ownership.module';
import { UsageModule } from './usage/usage.module';
import { GlobalExceptionFilter } from './common/errors/global-exception.filter';
import { gatewayConfigModule } from './config';
import { HealthModule } from './health/health.module';
import { LimitsModule } from './limits/limits.module';
import { ObservabilityModule } from './observability/observability.module';
import { OpenApiModule } from './openapi/openapi.module';
import { WIRE_FORMATS } from './formats/wire-formats';
import { PolicyModule } from './policy/policy.module';
import { UpstreamModule } from './upstream/upstream.module';

@Module({
  imports: [
    gatewayConfigModule(),
    DbModule,
    AuditModule,
    KeysModule,
    OwnershipModule,
    UsageModule,
    CatalogModule,
    AuthModule,
    PolicyModule,
    UpstreamModule,
    HealthModule,
    LimitsModule,
    ...WIRE_FORMATS.map((f) => f.module),
    ObservabilityModule,
    OpenApiModule,
    AdminModule,
    ConsoleModule,
  ],
  providers: [{ provide: APP_FILTER, useClass: GlobalExceptionFilter }],
})
export class AppModule {}
