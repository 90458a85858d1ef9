import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import helmet from 'helmet';
import type { AdminAuth } from './admin-auth';
import { GatewayError } from '../common/errors/gateway-errors';
import { own, setOwn } from '../common/own';
import { Logger } from '@nestjs/common';
import type { AuditLog } from '../audit/audit-log';
import { clientOf, type ConsoleSessions } from './console-session';
import { loginPage } from './login-page';
import { ConsoleOidc } from './oidc';
import { mountOidc } from './oidc.router';

/** The page's own files (web/*.js, *.css), plus chart.js's UMD build: no bundler needed. */
const WEB = join(__dirname, 'web');
const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
function assetTable(): Record<string, { file: string; type: string }> {
  const table: Record<string, { file: string; type: string }> = {
    'chart.umd.min.js': {
      // chart.js's "exports" hides dist/; its main entry sits beside the UMD build.
      file: join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
      type: TYPES.js,
    },
  };
  for (const name of readdirSync(WEB)) {
    const type = own(TYPES, name.split('.').pop() ?? '');
    if (type !== undefined) {
      setOwn(table, name, { file: join(WEB, name), type });
    }
  }
  return table;
}

/**
 * The strict policy: scripts, styles and calls only from the gateway itself, no inline
 * script or style, no framing, forms post only here.
 */
const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  },
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * Express router of the console, mounted at CONSOLE_PATH only: sign-in (admin token or
 * the one-time link, throttled per client address), sign-out, the session document the page reads, the page and its
 * assets. Everything else the page does goes through the admin API and its guard.
 */
export function consoleRouter(sessions: ConsoleSessions, auth: AdminAuth, audit: AuditLog): Router {
  const router = Router({ strict: true });
  const files = new Map<string, Buffer>();
  const assets = assetTable();
  const form = express.urlencoded({ extended: false, limit: '4kb' });
  const base = sessions.path;
  router.use(securityHeaders);
  router.use((_req, res, next) => {
    res.setHeader('cache-control', 'no-store');
    next();
  });

  router.get('/', async (req, res) => {
    if (req.originalUrl.split('?')[0] === base) {
      // Relative asset URLs need the trailing slash.
      res.redirect(302, `${base}/`);
      return;
    }
    if ((await sessions.read(req, res)) === undefined) {
      res.redirect(302, `${base}/login`);
      return;
    }
    res.type('html').send(file('index.html'));
  });

  router.get('/login', async (req, res) => {
    const token = req.query.token;
    if (typeof token === 'string') {
      if (!(await admitted(req, res))) {
        return;
      }
      if (sessions.consumeOneTime(token)) {
        await sessions.start(req, res, {
          role: 'admin',
          team: null,
          name: 'admin (one-time link)',
          principal: 'link',
          via: 'link',
          grant: 'link',
        });
        res.redirect(303, `${base}/`);
        return;
      }
      failed(req, 'link');
      res.status(401).type('html').send(login('This sign-in link was already used or is wrong.'));
      return;
    }
    // Where to go after a corporate sign-in (/oidc/start keeps console paths only).
    const back = req.query.return;
    res.type('html').send(login(undefined, typeof back === 'string' ? back : undefined));
  });

  router.post('/login', form, async (req, res) => {
    if (!(await admitted(req, res))) {
      return;
    }
    const token = own((req.body ?? {}) as Record<string, unknown>, 'token');
    if (
      typeof token === 'string' &&
      sessions.tokenGrant !== undefined &&
      auth.acceptsToken(token)
    ) {
      await sessions.start(req, res, {
        role: 'admin',
        team: null,
        name: 'admin token',
        principal: 'token',
        via: 'token',
        grant: sessions.tokenGrant,
      });
      res.redirect(303, `${base}/`);
      return;
    }
    failed(req, 'token');
    res.status(401).type('html').send(login('That is not the admin token.'));
  });

  // The way back in when no admin token is configured and the one-time link was used: a
  // fresh link goes to this replica's log (never to the browser), throttled like a sign-in.
  router.post('/login/link', form, async (req, res) => {
    if (!sessions.linkSignIn) {
      res.status(404).type('html').send(login('Sign in with the admin token.'));
      return;
    }
    if (!(await admitted(req, res))) {
      return;
    }
    const link = sessions.renewOneTimeLink();
    if (link !== undefined) {
      logger.log(
        `A new one-time console sign-in link was requested: ${link} (single use, 15 minutes)`,
      );
      audit.record({
        action: 'console.link_requested',
        actor: { kind: 'anonymous' },
        client: clientOf(req),
      });
    }
    res
      .type('html')
      .send(
        login(
          undefined,
          undefined,
          'A new one-time sign-in link is in the gateway log (valid 15 minutes; earlier links no longer work).',
        ),
      );
  });

  router.post('/logout', form, async (req, res) => {
    const session = await sessions.read(req, res);
    if (session !== undefined) {
      sessions.checkCsrf(req, session, own((req.body ?? {}) as Record<string, unknown>, 'csrf'));
      await sessions.end(req, res);
    }
    res.redirect(303, `${base}/login`);
  });

  if (sessions.oidc !== undefined) {
    mountOidc(router, sessions, audit, new ConsoleOidc(sessions.oidc), (res, status, message) => {
      res.status(status).type('html').send(login(message));
    });
  }

  router.get('/session.json', async (req, res) => {
    const session = await sessions.read(req, res);
    if (session === undefined) {
      res.status(401).json({ error: { message: 'Not signed in.', type: 'authentication_error' } });
      return;
    }
    res.json({ ...session, console_path: base });
  });

  router.get('/assets/:name', (req, res, next) => {
    const asset = own(assets, req.params.name);
    if (asset === undefined) {
      next();
      return;
    }
    res.setHeader('cache-control', 'no-cache');
    res.type(asset.type).send(cached(asset.file));
  });

  // Errors of these routes (a CSRF refusal, a bad form body) as a short page or JSON.
  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const { status, message } = consoleError(err);
    res.status(status).type('text/plain').send(message);
  });

  function cached(path: string): Buffer {
    let body = files.get(path);
    if (body === undefined) {
      body = readFileSync(path);
      files.set(path, body);
    }
    return body;
  }
  function file(name: string): Buffer {
    return cached(join(WEB, name));
  }
  /** Counts a sign-in attempt; answers 429 (and false) while the address is locked out. */
  async function admitted(req: Request, res: Response): Promise<boolean> {
    const verdict = await sessions.attempt(req);
    if (verdict.allowed) {
      return true;
    }
    res
      .status(429)
      .setHeader('retry-after', String(verdict.retryAfterSeconds))
      .type('html')
      .send(
        login(
          `Too many failed sign-ins from your address: try again in ${verdict.retryAfterSeconds} s.`,
        ),
      );
    return false;
  }
  function failed(req: Request, via: 'token' | 'link'): void {
    audit.record({
      action: 'console.sign_in_failed',
      actor: { kind: 'anonymous' },
      client: clientOf(req),
      change: { via },
      outcome: 'failure',
    });
  }
  function login(error?: string, back?: string, notice?: string): string {
    const query = back === undefined ? '' : `?return=${encodeURIComponent(back)}`;
    return loginPage({
      action: `${base}/login`,
      linkAction: sessions.linkSignIn ? `${base}/login/link` : undefined,
      notice,
      sso: sessions.oidc === undefined ? undefined : `${base}/oidc/start${query}`,
      tokenConfigured: auth.tokenConfigured,
      error,
      stylesheet: `${base}/assets/app.css`,
    });
  }
  return router;
}

const logger = new Logger('Console');

/**
 * What a console route's error tells the browser: the gateway's own errors and the body
 * parser's client errors as they are; anything else (an identity provider that cannot be
 * reached, a bug) is logged and answered with a generic 500, never its internal message.
 */
function consoleError(err: unknown): { status: number; message: string } {
  if (err instanceof GatewayError) {
    return { status: err.status, message: err.message };
  }
  const e = err as { status?: unknown; expose?: unknown; message?: unknown } | null;
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true) {
    return {
      status: e.status,
      message: typeof e.message === 'string' ? e.message : 'Bad request.',
    };
  }
  logger.error(`console route failed: ${err instanceof Error ? err.message : 'unknown error'}`);
  return {
    status: 500,
    message: 'The console could not complete this request; see the gateway log.',
  };
}
