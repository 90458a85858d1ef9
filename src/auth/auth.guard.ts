import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthenticationError } from '../common/errors/gateway-errors';
import type { GatewayRequest } from '../common/request-context';
import { ApiKeyService } from './api-key.service';
import { IS_PUBLIC } from './public.decorator';

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1].trim() : undefined;
}

/**
 * Global guard: accepts `Authorization: Bearer <key>` (OpenAI SDK, Anthropic SDK 1.x) and
 * `x-api-key: <key>` (Anthropic SDK 0.x). When both are sent, either may carry the key.
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
    const candidates = [bearer(req.headers.authorization), req.headers['x-api-key']];
    let presented = false;
    for (const candidate of candidates) {
      if (typeof candidate !== 'string' || candidate === '') {
        continue;
      }
      presented = true;
      const info = this.keys.verify(candidate);
      if (info) {
        req.ctx.keyId = info.id;
        return true;
      }
    }
    throw presented
      ? new AuthenticationError('Incorrect API key provided.', 'invalid_api_key')
      : new AuthenticationError(
          'You didn\'t provide an API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".',
          null,
        );
  }
}
