import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import cookieSession from 'cookie-session';
import type { Request, RequestHandler, Response } from 'express';
import { GatewayError } from '../common/errors/gateway-errors';
import type { AllConfig } from '../config';
import type { ConsoleOidcConfig } from './console.config';
import { CookieSeal } from './sealed-cookie';

/** Who is signed in to the console: an admin sees everything, a member only their team. */
export type ConsoleRole = 'admin' | 'member';

/** What a console session cookie holds (signed, never secret material). */
export interface ConsoleSession {
  role: ConsoleRole;
  /** The member's team (a key's `owner`); null for admins. */
  team: string | null;
  /** Display name: an e-mail, or "admin token". */
  name: string;
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

const COOKIE = 'gw_console';
const MAX_AGE_MS = 8 * 3_600_000;
/** How long a sign-in at the identity provider may take. */
export const LOGIN_TTL_MS = 10 * 60_000;
export const LOGIN_COOKIE = 'gw_console_login';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

type SessionRequest = Request & { session?: (Partial<ConsoleSession> & { exp?: number }) | null };

/**
 * Console sessions in signed cookies (cookie-session: HMAC-signed, HttpOnly,
 * SameSite=Strict, Secure when the request came over TLS). Parsed only for the console
 * and admin routes, on demand, so the generation endpoints never pay for them.
 */
@Injectable()
export class ConsoleSessions {
  readonly enabled: boolean;
  readonly path: string;
  /** Corporate sign-in, when CONSOLE_OIDC_ISSUER is set. */
  readonly oidc?: ConsoleOidcConfig;
  /** CONSOLE_PUBLIC_URL: the origin browsers use, over the request's own. */
  readonly publicUrl?: string;
  /** Seals a sign-in in progress into its cookie (any replica with the secret opens it). */
  readonly loginSeal: CookieSeal;
  private readonly middleware: RequestHandler;
  /** The one-time sign-in token printed at startup when no admin token is configured. */
  private oneTime?: Buffer;
  private readonly oneTimeToken?: string;

  constructor(config: ConfigService<AllConfig, true>) {
    const { enabled, path, sessionSecret, oidc, publicUrl } = config.get('console', {
      infer: true,
    });
    this.enabled = enabled;
    this.path = path;
    this.oidc = oidc;
    this.publicUrl = publicUrl;
    const secret = sessionSecret ?? randomBytes(32).toString('base64url');
    this.loginSeal = new CookieSeal(secret, LOGIN_COOKIE, LOGIN_TTL_MS);
    this.middleware = cookieSession({
      name: COOKIE,
      keys: [secret],
      httpOnly: true,
      sameSite: 'strict',
      maxAge: MAX_AGE_MS,
      path: '/',
    });
    if (enabled && config.get('auth', { infer: true }).adminToken === undefined) {
      this.oneTimeToken = randomBytes(24).toString('base64url');
      this.oneTime = digest(this.oneTimeToken);
    }
  }

  /** The sign-in link to print at startup, or undefined when an admin token is configured. */
  oneTimeLink(origin: string): string | undefined {
    return this.oneTimeToken === undefined || this.oneTime === undefined
      ? undefined
      : `${origin}${this.path}/login?token=${this.oneTimeToken}`;
  }

  /** True once for the one-time token; it is forgotten when used. */
  consumeOneTime(token: string): boolean {
    if (this.oneTime === undefined || !timingSafeEqual(digest(token), this.oneTime)) {
      return false;
    }
    this.oneTime = undefined;
    return true;
  }

  /** The signed-in session of this request, if any (parses the cookie once). */
  read(req: Request, res: Response): ConsoleSession | undefined {
    if (!this.enabled) {
      return undefined;
    }
    const sreq = this.attach(req, res);
    const s = sreq.session;
    if (
      s === null ||
      s === undefined ||
      (s.role !== 'admin' && s.role !== 'member') ||
      typeof s.csrf !== 'string' ||
      typeof s.name !== 'string' ||
      // The signature carries no time: a copied cookie would work forever without this.
      typeof s.exp !== 'number' ||
      s.exp <= Date.now()
    ) {
      return undefined;
    }
    return { role: s.role, team: s.team ?? null, name: s.name, csrf: s.csrf };
  }

  /** Starts a session (a fresh CSRF token each time, so none survives a sign-in). */
  start(req: Request, res: Response, who: Omit<ConsoleSession, 'csrf'>): ConsoleSession {
    const session: ConsoleSession = { ...who, csrf: randomBytes(24).toString('base64url') };
    this.attach(req, res).session = { ...session, exp: Date.now() + MAX_AGE_MS };
    return session;
  }

  end(req: Request, res: Response): void {
    this.attach(req, res).session = null;
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

  private attach(req: Request, res: Response): SessionRequest {
    const sreq = req as SessionRequest & { sessionOptions?: { secure?: boolean } };
    if (!Object.prototype.hasOwnProperty.call(sreq, 'sessionOptions')) {
      // Synchronous: cookie-session only defines a lazy getter and a header hook.
      this.middleware(req, res, () => undefined);
      if (sreq.sessionOptions) {
        // Secure only over TLS: the socket's, or X-Forwarded-Proto from a TRUST_PROXY proxy.
        // (cookie-session refuses a Secure cookie on a request Express deems plain HTTP.)
        sreq.sessionOptions.secure = req.secure;
      }
    }
    return sreq;
  }
}
