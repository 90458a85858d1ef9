import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { GatewayRequest } from '../common/request-context';
import { ApiKeyService } from './api-key.service';
import { authenticate } from './authenticate';
import { IS_PUBLIC } from './public.decorator';

/**
 * Global guard: every route needs a client key (see authenticate.ts) unless it is marked
 * @Public().
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) {
      return true;
    }
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    // The early middleware (bootstrap.ts) usually did this before the body was read.
    if (req.ctx.keyId === undefined) {
      req.ctx.keyId = authenticate(req.headers, this.keys).id;
    }
    return true;
  }
}
