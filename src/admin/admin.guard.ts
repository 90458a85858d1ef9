import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationError, RouteNotFoundError } from '../common/errors/gateway-errors';
import type { GatewayRequest } from '../common/request-context';
import { AdminAuth, type AdminPrincipal, type AdminRequest } from '../console/admin-auth';
import { ConsoleSessions } from '../console/console-session';

/** The principal AdminGuard attached to the request. */
export function principalOf(req: Request): AdminPrincipal {
  const p = (req as AdminRequest).adminPrincipal;
  if (p === undefined) {
    // Only reachable if a route forgot AdminGuard: fail closed.
    throw new AuthenticationError('Not signed in.', 'invalid_admin_token');
  }
  return p;
}

/**
 * Guard of every /admin/v1 route: resolves the principal and, for a cookie session,
 * requires the CSRF token on every state-changing call (a bearer token cannot be sent
 * by a cross-site form, so it needs none).
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly auth: AdminAuth,
    private readonly sessions: ConsoleSessions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<true> {
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    if (!this.auth.enabled) {
      throw new RouteNotFoundError(req.method, req.path);
    }
    const principal = await this.auth.principal(req, http.getResponse<Response>());
    if (principal === undefined) {
      if (!this.auth.tokenConfigured) {
        // No token configured: nothing to probe for, as before the console existed.
        throw new RouteNotFoundError(req.method, req.path);
      }
      throw new AuthenticationError(
        'Missing or incorrect admin token: send "Authorization: Bearer <GATEWAY_ADMIN_TOKEN>".',
        'invalid_admin_token',
      );
    }
    if (principal.via === 'session') {
      this.sessions.checkCsrf(req, principal);
    }
    (req as AdminRequest).adminPrincipal = principal;
    return true;
  }
}
