import { Module, type OnModuleInit } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TracingService } from '../observability/tracing/tracing.service';
import { ApiKeyService } from './api-key.service';
import { AuthGuard } from './auth.guard';
import { AuthFailureThrottle } from './auth-throttle';

/** Client-key verification, applied to every route except those marked @Public(). */
@Module({
  providers: [AuthFailureThrottle, ApiKeyService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [ApiKeyService],
})
export class AuthModule implements OnModuleInit {
  constructor(private readonly tracing: TracingService) {}

  onModuleInit(): void {
    this.tracing.traceGuards([[AuthGuard, 'gateway.auth_guard']]);
  }
}
