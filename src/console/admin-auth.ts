import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request, Response } from 'express';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import { type ConsoleSession, ConsoleSessions } from './console-session';

/**
 * Who calls the admin API: the admin token (every key, every team), or a console session
 * whose role decides; a member's `team` scopes every key and usage call.
 */
export type AdminPrincipal =
  { via: 'token'; role: 'admin'; team: null } | ({ via: 'session' } & ConsoleSession);

/**
 * What an admin request carries: the caller as resolved once (`resolvedAdmin`, principal
 * undefined when nobody), and the principal AdminGuard approved, which is all that
 * handlers read, so a route without the guard still finds nobody.
 */
export type AdminRequest = Request & {
  resolvedAdmin?: Promise<AdminPrincipal | undefined>;
  adminPrincipal?: AdminPrincipal;
};

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Checks the admin bearer token (GATEWAY_ADMIN_TOKEN) or a console session. Token
 * digests are compared in constant time whatever the lengths. Without a key store, or
 * with neither a token nor the console configured, the admin API does not exist (404).
 */
@Injectable()
export class AdminAuth {
  private readonly token?: Buffer;
  private readonly store: boolean;

  constructor(
    config: ConfigService<AllConfig, true>,
    @Inject(DATABASE) database: OpenDatabase | null,
    private readonly sessions: ConsoleSessions,
  ) {
    const token = config.get('auth', { infer: true }).adminToken;
    this.store = database !== null;
    this.token = token !== undefined && this.store ? digest(token) : undefined;
  }

  get enabled(): boolean {
    return this.store && (this.token !== undefined || this.sessions.enabled);
  }

  /** True when an admin token is configured (else the API answers 404 to strangers). */
  get tokenConfigured(): boolean {
    return this.token !== undefined;
  }

  /** True when the token matches GATEWAY_ADMIN_TOKEN. */
  acceptsToken(token: string): boolean {
    return this.token !== undefined && timingSafeEqual(digest(token), this.token);
  }

  /**
   * The caller: a bearer admin token first, else a console session cookie. Resolved once
   * per request and kept on it: the body parser asks before the guard does.
   */
  principal(req: Request, res: Response): Promise<AdminPrincipal | undefined> {
    const areq = req as AdminRequest;
    areq.resolvedAdmin ??= this.resolve(req, res);
    return areq.resolvedAdmin;
  }

  private async resolve(req: Request, res: Response): Promise<AdminPrincipal | undefined> {
    if (!this.store) {
      return undefined;
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (match !== null && this.acceptsToken(match[1])) {
      return { via: 'token', role: 'admin', team: null };
    }
    // A session ended on any replica is refused here (see SessionStore).
    const session = await this.sessions.read(req, res);
    return session && { via: 'session', ...session };
  }
}
