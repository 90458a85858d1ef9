import { parse as parseCookies } from 'cookie';
import type { Request, Response, Router } from 'express';
import type { AuditLog } from '../audit/audit-log';
import { clientOf, LOGIN_COOKIE, LOGIN_TTL_MS, type ConsoleSessions } from './console-session';
import { ConsoleOidc, OidcSignInError, type PendingLogin } from './oidc';

/** A Host (or X-Forwarded-Host) fit for a URL: a name or address and an optional port. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function isPending(v: unknown): v is PendingLogin {
  const p = v as Partial<PendingLogin> | null | undefined;
  return (
    typeof p?.verifier === 'string' &&
    typeof p.state === 'string' &&
    typeof p.nonce === 'string' &&
    typeof p.returnTo === 'string'
  );
}

/**
 * `/oidc/start` and `/oidc/callback` of the console router. A sign-in in progress (PKCE
 * verifier, state, nonce, where to go afterwards) travels in a sealed cookie rather than
 * in this process, so the callback completes on whichever replica it lands on. The
 * cookie is HttpOnly and SameSite=Lax: Lax because the provider's redirect back is a
 * cross-site navigation, which would not carry a Strict cookie.
 */
export function mountOidc(
  router: Router,
  sessions: ConsoleSessions,
  audit: AuditLog,
  oidc: ConsoleOidc,
  fail: (res: Response, status: number, message: string) => void,
): void {
  const base = sessions.path;
  const cookiePath = `${base}/oidc`;
  /**
   * CONSOLE_PUBLIC_URL when set; else the request's scheme and host, which Express takes
   * from X-Forwarded-Proto / X-Forwarded-Host only when TRUST_PROXY trusts the peer.
   */
  const redirectUri = (req: Request): string | undefined => {
    if (sessions.publicUrl !== undefined) {
      return `${sessions.publicUrl}${base}/oidc/callback`;
    }
    const host = req.host;
    return host !== undefined && HOST.test(host)
      ? `${req.protocol}://${host}${base}/oidc/callback`
      : undefined;
  };
  /** Only a path of this console: never another site (an open redirect). */
  const returnPath = (raw: unknown): string =>
    typeof raw === 'string' &&
    raw.length <= 500 &&
    raw.startsWith(`${base}/`) &&
    /^[A-Za-z0-9._~/#?&=%-]*$/.test(raw) &&
    !raw.includes('//')
      ? raw
      : `${base}/`;

  router.get('/oidc/start', (req, res, next) => {
    const uri = redirectUri(req);
    if (uri === undefined) {
      fail(res, 400, 'The request has no usable Host header.');
      return;
    }
    oidc.start(uri).then(({ url, pending }) => {
      const login: PendingLogin = { ...pending, returnTo: returnPath(req.query.return) };
      res.cookie(LOGIN_COOKIE, sessions.loginSeal.seal(login), {
        httpOnly: true,
        sameSite: 'lax',
        secure: req.secure,
        path: cookiePath,
        maxAge: LOGIN_TTL_MS,
      });
      res.redirect(302, url);
    }, next);
  });

  router.get('/oidc/callback', (req, res, next) => {
    const login = sessions.loginSeal.open(parseCookies(req.headers.cookie ?? '')[LOGIN_COOKIE]);
    // Single use: the sign-in it describes is finished either way.
    res.clearCookie(LOGIN_COOKIE, { path: cookiePath });
    const uri = redirectUri(req);
    if (!isPending(login) || uri === undefined) {
      fail(res, 400, 'This sign-in expired or was started elsewhere: sign in again.');
      return;
    }
    oidc
      .finish(uri, req.originalUrl, login)
      .then(
        async (who) => {
          await sessions.start(req, res, { ...who, via: 'oidc' });
          // A page, not a redirect: a redirect chain begun on the provider's site is
          // cross-site, so the browser would hold back the new Strict cookie on it.
          const to = login.returnTo.replace(/&/g, '&amp;');
          res
            .type('html')
            .send(
              `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${to}"><title>Signed in</title><p>Signed in. <a href="${to}">Open the console</a>.</p>`,
            );
        },
        (err: unknown) => {
          if (err instanceof OidcSignInError) {
            audit.record({
              action: 'console.sign_in_failed',
              actor: { kind: 'anonymous' },
              client: clientOf(req),
              change: { via: 'oidc', reason: err.message },
              outcome: 'failure',
            });
            fail(res, 403, err.message);
            return;
          }
          next(err);
        },
      )
      .catch(next);
  });
}
