import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { parse as parseCookies } from 'cookie';
import type { Request, Response } from 'express';
import { AuditLog } from '../audit/audit-log';
import { GatewayError } from '../common/errors/gateway-errors';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import type { OpenDatabase } from '../db/database';
import type { ConsoleOidcConfig } from '../config/console.config';
import { CookieSeal } from './sealed-cookie';
import {
  type ConsoleRole,
  type EndReason,
  type SessionGrant,
  SESSION_TTL_MS,
  SessionStore,
  type StoredSession,
} from './session-store';
import { type SigninAttempt, SigninThrottle } from './signin-throttle';

export type { ConsoleRole } from './session-store';

/** A signed-in console session, as the pages and the admin API see it. */
export interface ConsoleSession {
  /** Public id (admin API, audit log); not what the cookie carries. */
  id: string;
  role: ConsoleRole;
  /** The member's team (a key's `owner`); null for admins. */
  team: string | null;
  /** Display name: an e-mail, or "admin token". */
  name: string;
  /** Stable identity: `token`, `link`, or `oidc:<sub>`. */
  principal: string;
  /** Synchronizer token every state-changing call must echo in `x-csrf-token`. */
  csrf: string;
}

/** A state-changing console call without the session's CSRF token. */
export class CsrfError extends GatewayError {
  constructor() {
    super(403, 'permission', 'Missing or incorrect CSRF token: reload the console and retry.', {
      code: 'csrf_token_invalid',
    });
  }
}

/** Sign-in needs the key store: sessions live in its database. */
export class SessionStoreMissingError extends GatewayError {
  constructor() {
    super(503, 'server', 'The console needs the key store (KEY_STORE=database) to sign in.', {
      code: 'console_store_off',
    });
  }
}

/** The session cookie's name. */
export const SESSION_COOKIE = 'gw_console';
const COOKIE = SESSION_COOKIE;
/** How long a sign-in at the identity provider may take. */
export const LOGIN_TTL_MS = 10 * 60_000;
export const LOGIN_COOKIE = 'gw_console_login';
/** A one-time link printed on request is good for this long. */
const REQUESTED_LINK_TTL_MS = 15 * 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** The address a sign-in is counted against: Express's `req.ip` (honours TRUST_PROXY). */
export function clientOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Console sessions, kept in the database (see SessionStore): the cookie carries only a
 * random token, sealed (AES-GCM under CONSOLE_SESSION_SECRET), HttpOnly, SameSite=Strict,
 * Secure when the request came over TLS. The CSRF token is derived from the session token,
 * so it needs no storage and dies with the session. Parsed only for the console and admin
 * routes, on demand, so the generation endpoints never pay for them.
 */
@Injectable()
export class ConsoleSessions implements OnModuleInit {
  private readonly logger = new Logger('ConsoleSessions');
  readonly enabled: boolean;
  readonly path: string;
  /** Corporate sign-in, when CONSOLE_OIDC_ISSUER is set. */
  readonly oidc?: ConsoleOidcConfig;
  /** CONSOLE_PUBLIC_URL: the origin browsers use, over the request's own. */
  readonly publicUrl?: string;
  /** Seals a sign-in in progress into its cookie (any replica with the secret opens it). */
  readonly loginSeal: CookieSeal;
  private readonly sessionSeal: CookieSeal;
  private readonly csrfKey: Buffer;
  readonly store: SessionStore | null;
  readonly throttle: SigninThrottle | null;
  /** Grant of an admin-token session: a fingerprint, so a new token ends the old sessions. */
  readonly tokenGrant?: string;
  /** The one-time sign-in token (digest) when no admin token is configured. */
  private oneTime?: { digest: Buffer; expires: number };
  /** The origin the startup log named (never a request's Host: a client chooses that). */
  announcedOrigin?: string;
  private readonly oneTimeToken?: string;

  constructor(
    config: ConfigService<AllConfig, true>,
    @Inject(DATABASE) database: OpenDatabase | null,
    private readonly audit: AuditLog,
  ) {
    const { enabled, path, sessionSecret, oidc, publicUrl, throttle } = config.get('console', {
      infer: true,
    });
    this.enabled = enabled;
    this.path = path;
    this.oidc = oidc;
    this.publicUrl = publicUrl;
    const secret = sessionSecret ?? randomBytes(32).toString('base64url');
    this.loginSeal = new CookieSeal(secret, LOGIN_COOKIE, LOGIN_TTL_MS);
    this.sessionSeal = new CookieSeal(secret, COOKIE, SESSION_TTL_MS);
    this.csrfKey = Buffer.from(hkdfSync('sha256', secret, '', 'gateway console: csrf', 32));
    this.store = database && enabled ? new SessionStore(database) : null;
    this.throttle = database && enabled ? new SigninThrottle(database, throttle) : null;
    const adminToken = config.get('auth', { infer: true }).adminToken;
    if (adminToken !== undefined) {
      this.tokenGrant = `token:${createHash('sha256').update(`gateway console grant\0${adminToken}`).digest('hex').slice(0, 16)}`;
    } else if (enabled) {
      this.oneTimeToken = randomBytes(24).toString('base64url');
      this.oneTime = { digest: digest(this.oneTimeToken), expires: Infinity };
    }
  }

  /**
   * Ends the sessions whose role this configuration no longer grants (an e-mail taken off
   * CONSOLE_OIDC_ADMIN_EMAILS, a new admin token, single sign-on switched off), and tidies
   * old rows. Runs at boot: configuration changes only with a restart.
   */
  async onModuleInit(): Promise<void> {
    if (this.store === null) {
      return;
    }
    try {
      const ended = await this.store.endWithdrawn((s) => this.grantHolds(s));
      for (const s of ended) {
        this.audit.record({
          action: 'console.role_change',
          actor: { kind: 'system', name: 'configuration' },
          target: { kind: 'session', id: s.id },
          team: s.team,
          change: {
            principal: s.principal,
            name: s.name,
            role: { from: s.role, to: null },
            grant: s.grant,
            reason: 'grant_withdrawn',
          },
        });
      }
      if (ended.length > 0) {
        this.logger.log(
          `ended ${ended.length} console sessions the configuration no longer grants`,
        );
      }
      await this.store.prune();
      await this.throttle?.prune();
    } catch (err) {
      this.logger.warn(`console session upkeep failed: ${(err as Error).message}`);
    }
  }

  /** The sign-in link to print at startup, or undefined when an admin token is configured. */
  oneTimeLink(origin: string): string | undefined {
    return this.oneTimeToken === undefined || this.oneTime === undefined
      ? undefined
      : `${origin}${this.path}/login?token=${this.oneTimeToken}`;
  }

  /** True when sign-in is by one-time link only (no admin token configured). */
  get linkSignIn(): boolean {
    return this.tokenGrant === undefined;
  }

  /**
   * A fresh one-time link, replacing any earlier one, good for 15 minutes: the way back in
   * for an admin who signed out when no admin token is configured. The caller prints it
   * to the log, where only whoever runs the gateway reads it.
   */
  renewOneTimeLink(): string | undefined {
    if (!this.linkSignIn || !this.enabled) {
      return undefined;
    }
    const token = randomBytes(24).toString('base64url');
    this.oneTime = { digest: digest(token), expires: Date.now() + REQUESTED_LINK_TTL_MS };
    return `${this.publicUrl ?? this.announcedOrigin ?? ''}${this.path}/login?token=${token}`;
  }

  /** True once for the one-time token; it is forgotten when used. */
  consumeOneTime(token: string): boolean {
    const one = this.oneTime;
    if (
      one === undefined ||
      one.expires <= Date.now() ||
      !timingSafeEqual(digest(token), one.digest)
    ) {
      return false;
    }
    this.oneTime = undefined;
    return true;
  }

  /** Counts a sign-in attempt from the request's address (see SigninThrottle). */
  attempt(req: Request): Promise<SigninAttempt> {
    if (this.throttle === null) {
      throw new SessionStoreMissingError();
    }
    return this.throttle.attempt(clientOf(req));
  }

  /** The signed-in session of this request, if any (one cached check per request). */
  read(req: Request, _res?: Response): Promise<ConsoleSession | undefined> {
    const sreq = req as Request & { consoleSession?: Promise<ConsoleSession | undefined> };
    sreq.consoleSession ??= this.lookup(req);
    return sreq.consoleSession;
  }

  /** Starts a session (a fresh token, hence a fresh CSRF token) and sets its cookie. */
  async start(req: Request, res: Response, who: SessionGrant): Promise<ConsoleSession> {
    const client = clientOf(req);
    const { cookie, session } = await this.issue(who, client);
    await this.throttle?.succeeded(client);
    res.cookie(COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'strict',
      // Secure only over TLS: the socket's, or X-Forwarded-Proto from a TRUST_PROXY proxy.
      secure: req.secure,
      path: '/',
      maxAge: SESSION_TTL_MS,
    });
    (req as Request & { consoleSession?: Promise<ConsoleSession | undefined> }).consoleSession =
      Promise.resolve(session);
    return session;
  }

  /**
   * Creates a session (ending the principal's sessions of another role first, for single
   * sign-on) and records the sign-in; returns the `gw_console` cookie's value.
   */
  async issue(
    who: SessionGrant,
    client: string | null,
  ): Promise<{ cookie: string; session: ConsoleSession }> {
    if (this.store === null) {
      throw new SessionStoreMissingError();
    }
    if (who.via === 'oidc') {
      // The same person with another role or team: what they could do before ends now.
      const changed = await this.store.endByPrincipal(who.principal, 'role_changed', who);
      for (const s of changed) {
        this.audit.record({
          action: 'console.role_change',
          actor: { kind: 'session', id: who.principal, name: who.name },
          client,
          target: { kind: 'session', id: s.id },
          team: who.team ?? s.team,
          change: { role: { from: s.role, to: who.role }, team: { from: s.team, to: who.team } },
        });
      }
    }
    const { token, session } = await this.store.create(who, client);
    this.audit.record({
      action: 'console.sign_in',
      actor: { kind: 'session', id: who.principal, name: who.name },
      client,
      target: { kind: 'session', id: session.id },
      team: who.team,
      change: { via: who.via, role: who.role, team: who.team, grant: who.grant },
    });
    return { cookie: this.sessionSeal.seal(token), session: this.view(session, token) };
  }

  /** Signs out: the session ends on every replica, and the cookie is cleared. */
  async end(req: Request, res: Response): Promise<void> {
    const token = this.tokenOf(req);
    res.clearCookie(COOKIE, { path: '/' });
    if (token === undefined || this.store === null) {
      return;
    }
    const ended = await this.store.endByToken(token, 'signed_out');
    if (ended !== undefined) {
      this.audit.record({
        action: 'console.sign_out',
        actor: { kind: 'session', id: ended.principal, name: ended.name },
        client: clientOf(req),
        target: { kind: 'session', id: ended.id },
        team: ended.team,
      });
    }
  }

  /** Ends sessions for an admin: one by id, or every one of a principal. */
  async endFor(
    target: { id: string } | { principal: string },
    reason: EndReason,
  ): Promise<StoredSession[]> {
    if (this.store === null) {
      throw new SessionStoreMissingError();
    }
    if ('id' in target) {
      const one = await this.store.endById(target.id, reason);
      return one === undefined ? [] : [one];
    }
    return this.store.endByPrincipal(target.principal, reason);
  }

  /** Throws CsrfError unless a state-changing request echoes the session's token. */
  checkCsrf(req: Request, session: ConsoleSession, sent?: unknown): void {
    if (SAFE_METHODS.has(req.method)) {
      return;
    }
    const token = sent ?? req.headers['x-csrf-token'];
    if (typeof token !== 'string' || !timingSafeEqual(digest(token), digest(session.csrf))) {
      throw new CsrfError();
    }
  }

  private async lookup(req: Request): Promise<ConsoleSession | undefined> {
    const token = this.tokenOf(req);
    if (token === undefined || this.store === null) {
      return undefined;
    }
    const session = await this.store.find(token);
    return session && this.view(session, token);
  }

  private tokenOf(req: Request): string | undefined {
    if (!this.enabled || req.headers.cookie === undefined) {
      return undefined;
    }
    const sealed = parseCookies(req.headers.cookie)[COOKIE];
    const token = this.sessionSeal.open(sealed);
    return typeof token === 'string' ? token : undefined;
  }

  private view(s: StoredSession, token: string): ConsoleSession {
    const csrf = createHmac('sha256', this.csrfKey).update(token).digest('base64url');
    return { id: s.id, role: s.role, team: s.team, name: s.name, principal: s.principal, csrf };
  }

  /** Whether this configuration still grants a live session's role. */
  private grantHolds(s: StoredSession): boolean {
    const [kind, value = ''] = s.grant.split(/:(.*)/s, 2);
    const oidc = this.oidc;
    switch (kind) {
      case 'token':
        return s.grant === this.tokenGrant;
      case 'link':
        return true;
      case 'team':
        return oidc !== undefined;
      case 'email':
        return oidc?.adminEmails.includes(value) ?? false;
      case 'subject':
        return oidc?.adminSubjects.includes(s.principal.replace(/^oidc:/, '')) ?? false;
      case 'group':
        return oidc?.adminGroups.includes(value) ?? false;
      case 'claim':
        return oidc?.adminClaim === value;
      default:
        return false;
    }
  }
}
