import { randomBytes } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { Request, Response, Router } from 'express';
import type { ConsoleSessions } from './console-session';
import { ConsoleOidc, OidcSignInError, type PendingLogin } from './oidc';

const PENDING_COOKIE = 'gw_console_login';
const PENDING_TTL_MS = 10 * 60_000;
const MAX_PENDING = 1000;

/**
 * `/oidc/start` and `/oidc/callback` of the console router. A sign-in in progress (PKCE
 * verifier, state, nonce) stays in this process, found by a random id in a short-lived
 * SameSite=Lax cookie: Lax because the provider's redirect back is a cross-site
 * navigation, which would not carry the Strict session cookie.
 */
export function mountOidc(
  router: Router,
  sessions: ConsoleSessions,
  oidc: ConsoleOidc,
  fail: (res: Response, status: number, message: string) => void,
): void {
  const pending = new Map<string, PendingLogin & { at: number }>();
  const base = sessions.path;
  const redirectUri = (req: Request): string =>
    `${req.protocol}://${req.get('host') ?? 'localhost'}${base}/oidc/callback`;

  router.get('/oidc/start', (req, res, next) => {
    oidc.start(redirectUri(req)).then(({ url, pending: login }) => {
      const now = Date.now();
      for (const [id, p] of pending) {
        if (now - p.at > PENDING_TTL_MS || pending.size >= MAX_PENDING) {
          pending.delete(id);
        }
      }
      const id = randomBytes(18).toString('base64url');
      pending.set(id, { ...login, at: now });
      res.cookie(PENDING_COOKIE, id, {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: `${base}/oidc`,
        maxAge: PENDING_TTL_MS,
      });
      res.redirect(302, url);
    }, next);
  });

  router.get('/oidc/callback', (req, res, next) => {
    const id = parseCookies(req.headers.cookie ?? '')[PENDING_COOKIE];
    const login = id === undefined ? undefined : pending.get(id);
    res.clearCookie(PENDING_COOKIE, { path: `${base}/oidc` });
    if (id === undefined || login === undefined || Date.now() - login.at > PENDING_TTL_MS) {
      fail(res, 400, 'This sign-in expired or was started elsewhere: sign in again.');
      return;
    }
    pending.delete(id);
    oidc.finish(redirectUri(req), req.originalUrl, login).then(
      (who) => {
        sessions.start(req, res, who);
        // A page, not a redirect: a redirect chain begun on the provider's site is
        // cross-site, so the browser would hold back the new Strict cookie on it.
        res
          .type('html')
          .send(
            `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${base}/"><title>Signed in</title><p>Signed in. <a href="${base}/">Open the console</a>.</p>`,
          );
      },
      (err: unknown) => {
        if (err instanceof OidcSignInError) {
          fail(res, 403, err.message);
          return;
        }
        next(err);
      },
    );
  });
}
