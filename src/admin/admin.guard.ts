import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AuthenticationError, RouteNotFoundError } from '../common/errors/gateway-errors';
import type { GatewayRequest } from '../common/request-context';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Checks the admin bearer token (GATEWAY_ADMIN_TOKEN). Both sides are hashed first so
 * the comparison is constant-time whatever the lengths. Without a token configured, or
 * without a key store, the admin API does not exist (404), so it cannot be probed.
 */
@Injectable()
export class AdminAuth {
  private readonly token?: Buffer;

  constructor(
    config: ConfigService<AllConfig, true>,
    @Inject(DATABASE) database: OpenDatabase | null,
  ) {
    const token = config.get('auth', { infer: true }).adminToken;
    this.token = token !== undefined && database !== null ? digest(token) : undefined;
  }

  get enabled(): boolean {
    return this.token !== undefined;
  }

  /** True when the request carries the admin token. */
  accepts(headers: IncomingHttpHeaders): boolean {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
    return (
      this.token !== undefined && match !== null && timingSafeEqual(digest(match[1]), this.token)
    );
  }
}

/** Guard of every /admin/v1 route. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly auth: AdminAuth) {}

  canActivate(context: ExecutionContext): true {
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    if (!this.auth.enabled) {
      throw new RouteNotFoundError(req.method, req.path);
    }
    if (!this.auth.accepts(req.headers)) {
      throw new AuthenticationError(
        'Missing or incorrect admin token: send "Authorization: Bearer <GATEWAY_ADMIN_TOKEN>".',
        'invalid_admin_token',
      );
    }
    return true;
  }
}
