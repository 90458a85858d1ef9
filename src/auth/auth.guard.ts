import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { PermissionDeniedError } from '../common/errors/gateway-errors';
import type { GatewayRequest } from '../common/request-context';
import { ApiKeyService } from './api-key.service';
import { type ApiKeyInfo, endpointOfPath } from '../common/key-policy';
import { authenticateRequest } from './authenticate';
import { IS_PUBLIC } from '../common/public.decorator';

/**
 * Global guard: every route needs a client key (see authenticate.ts) unless it is marked
 * @Public(), and a key scoped to some endpoints gets 403 on the others.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) {
      return true;
    }
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    // Usually answered from what the early middleware (bootstrap.ts) decided, failures
    // included, before the body was read.
    const info = authenticateRequest(req, this.keys);
    return info instanceof Promise
      ? info.then((i) => checkEndpoint(i, req.path))
      : checkEndpoint(info, req.path);
  }
}

function checkEndpoint(info: ApiKeyInfo, path: string): true {
  const allowed = info.scope?.endpoints;
  if (allowed === undefined) {
    return true;
  }
  const endpoint = endpointOfPath(path);
  if (endpoint && !allowed.has(endpoint)) {
    throw new PermissionDeniedError(
      `This API key may not use the ${endpoint} endpoint (${path}).`,
      'endpoint_not_allowed',
    );
  }
  return true;
}
