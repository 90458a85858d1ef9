import { Body, Controller, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { AuditLog } from '../audit/audit-log';
import { Public } from '../common/public.decorator';
import { GatewayError, InvalidRequestError } from '../common/errors/gateway-errors';
import { own } from '../common/own';
import { ConsoleSessions, SessionStoreMissingError } from '../console/console-session';
import type { StoredSession } from '../console/session-store';
import type { AdminPrincipal } from '../console/admin-auth';
import { AdminGuard, principalOf } from './admin.guard';
import { auditSource } from './audit-facts';

class AdminOnlyError extends GatewayError {
  constructor() {
    super(403, 'permission', 'Only admins manage console sessions.', { code: 'admin_only' });
  }
}

function sessionView(s: StoredSession): Record<string, unknown> {
  return {
    object: 'console_session',
    id: s.id,
    principal: s.principal,
    name: s.name,
    role: s.role,
    team: s.team,
    via: s.via,
    client: s.client,
    created_at: s.createdAt.toISOString(),
    last_seen_at: s.lastSeenAt.toISOString(),
    expires_at: s.expiresAt.toISOString(),
  };
}

/**
 * `/admin/v1/sessions` (admins only): the live console sessions, and ending them, one by
 * id or every session of a principal (removing someone's access at once, everywhere).
 */
@Controller('admin/v1/sessions')
@Public()
@UseGuards(AdminGuard)
export class AdminSessionsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly audit: AuditLog,
  ) {}

  @Get()
  async list(@Req() req: Request): Promise<object> {
    this.adminOnly(principalOf(req));
    const store = this.sessions.store;
    if (store === null) {
      throw new SessionStoreMissingError();
    }
    return { object: 'list', data: (await store.list()).map(sessionView) };
  }

  @Post(':id/end')
  @HttpCode(200)
  async endOne(@Param('id') id: string, @Req() req: Request): Promise<object> {
    const who = principalOf(req);
    this.adminOnly(who);
    return this.ended(req, who, await this.sessions.endFor({ id }, 'ended_by_admin'));
  }

  /** Body `{ "principal": "oidc:<sub>" }`: every live session of that identity. */
  @Post('end')
  @HttpCode(200)
  async endAll(@Body() body: unknown, @Req() req: Request): Promise<object> {
    const who = principalOf(req);
    this.adminOnly(who);
    const principal =
      body !== null && typeof body === 'object'
        ? own(body as Record<string, unknown>, 'principal')
        : undefined;
    if (typeof principal !== 'string' || principal === '' || principal.length > 300) {
      throw new InvalidRequestError(
        "Missing or invalid 'principal': expected a session's principal, such as oidc:<sub>.",
        'principal',
        'invalid_value',
      );
    }
    return this.ended(req, who, await this.sessions.endFor({ principal }, 'ended_by_admin'));
  }

  private ended(req: Request, who: AdminPrincipal, ended: StoredSession[]): object {
    for (const s of ended) {
      this.audit.record({
        ...auditSource(who, req),
        action: 'console.session_end',
        target: { kind: 'session', id: s.id },
        team: s.team,
        change: { principal: s.principal, name: s.name, role: s.role },
      });
    }
    return { object: 'list', data: ended.map(sessionView) };
  }

  private adminOnly(who: AdminPrincipal): void {
    if (who.role !== 'admin') {
      throw new AdminOnlyError();
    }
  }
}
