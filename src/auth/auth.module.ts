import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyService } from './api-key.service';
import { AuthGuard } from './auth.guard';
import { AuthFailureThrottle } from './auth-throttle';

/** Client-key verification, applied to every route except those marked @Public(). */
@Module({
  providers: [AuthFailureThrottle, ApiKeyService, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [ApiKeyService],
})
export class AuthModule {}
