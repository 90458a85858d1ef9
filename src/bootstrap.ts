import type { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { envelopeForPath } from './common/errors/global-exception.filter';
import { errorBody } from './common/errors/envelopes';
import { InvalidRequestError } from './common/errors/gateway-errors';
import { exceedsJsonDepth } from './common/validation/json-depth';
import { normalizeError } from './common/errors/normalize-error';
import { requestContextMiddleware } from './common/logging/request-context.middleware';
import type { GatewayRequest } from './common/request-context';
import type { AllConfig } from './config';
import { ApiKeyService } from './auth/api-key.service';
import { authenticateRequest } from './auth/authenticate';
import { RequestObserver } from './observability/request-observer';
import { TracingService } from './observability/tracing/tracing.service';
import { UsagePipeline } from './usage/usage.module';
import { RATE_LIMIT_HEADER_NAMES } from './limits/rate/headers';

/** Headers the gateway adds to its answers (what served, what it changed, what it decided). */
const GATEWAY_ANSWER_HEADERS = [
  'x-gateway-model',
  'x-gateway-deployment',
  'x-gateway-attempts',
  'x-gateway-protections',
  'x-gateway-protections-usage',
  'x-gateway-dropped-params',
  'x-gateway-cache',
];

/**
 * HTTP plumbing shared by main.ts and the e2e tests: request context and access log
 * first, then the JSON body parser (whose failures are answered here, in the envelope
 * of the endpoint that was called, since they happen before any Nest filter runs).
 */
export function configureApp(app: NestExpressApplication, logger: Logger): INestApplication {
  const config = app.get<ConfigService<AllConfig, true>>(ConfigService);
  const { maxBodySize, corsOrigins, trustProxy } = config.get('app', { infer: true });
  app.disable('x-powered-by');
  app.set('etag', false);
  // Only changes what req.protocol, req.host and req.ip report (lazily, when read): the
  // console reads the first two, the failed-authentication throttle the last (behind a
  // proxy not trusted here, every client would share the proxy's address); rate limits
  // count per key and logs hold no client IP.
  app.set('trust proxy', trustProxy);
  // Metrics and traces, and the usage ledger's row per generation request (no recorder
  // when KEY_STORE=off): told by the access log's one 'close' listener per request.
  const recorder = app.get(UsagePipeline).recorder;
  const hooks =
    recorder === null ? [app.get(RequestObserver)] : [app.get(RequestObserver), recorder];
  app.use(requestContextMiddleware(logger, hooks));
  if (corsOrigins.length > 0) {
    app.enableCors({
      origin: corsOrigins.includes('*') ? true : corsOrigins,
      // No allowedHeaders: the preflight echoes what the SDK asks for (x-api-key,
      // anthropic-*, x-stainless-*), which a fixed list with patterns cannot match.
      // A browser client reads only the headers listed here: the gateway's own and the
      // rate-limit headers too, not just the request id.
      exposedHeaders: [
        'x-request-id',
        'request-id',
        'retry-after',
        ...GATEWAY_ANSWER_HEADERS,
        ...RATE_LIMIT_HEADER_NAMES,
      ],
    });
  }
  // Keys are checked before the body is read, so an anonymous client cannot make the
  // gateway buffer and parse bodies: without a valid key the body is never read. The
  // answer is left to routing, so that a path that does not exist is a 404 whatever the
  // key, and an existing one gets the global AuthGuard's 401 before its handler runs.
  const keys = app.get(ApiKeyService);
  const tracing = app.get(TracingService);
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const gwReq = req as GatewayRequest;
    try {
      // Sets ctx.key (or ctx.authFailure, which the guard answers without asking again).
      const info = tracing.enabled
        ? tracing.step(req, 'gateway.auth', () => authenticateRequest(gwReq, keys))
        : authenticateRequest(gwReq, keys);
      if (info instanceof Promise) {
        // A managed key missing from the cache: one store lookup, then on.
        info.then(
          () => next(),
          () => next(),
        );
        return;
      }
    } catch {
      // no key yet: see above
    }
    next();
  });
  const json = express.json({
    limit: maxBodySize,
    // Every body is JSON, whatever content-type a hand-written client sent.
    type: () => true,
    verify: (req, _res, buf) => {
      if (exceedsJsonDepth(buf, MAX_JSON_DEPTH)) {
        throw new InvalidRequestError(
          `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`,
          null,
          'invalid_json',
        );
      }
      // The parser skips a UTF-8 byte-order mark; the bytes relayed upstream must too.
      (req as GatewayRequest).rawBody = hasBom(buf) ? buf.subarray(3) : buf;
    },
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if ((req as GatewayRequest).ctx.keyId === undefined) {
      next();
    } else {
      json(req, res, next);
    }
  });
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const { error } = normalizeError(err, req.method, req.path);
    const ctx = (req as GatewayRequest).ctx;
    ctx.errorCode = error.code ?? String(error.status);
    res
      .status(error.status)
      .json(
        errorBody(
          envelopeForPath(req.path, req.headers['anthropic-version']),
          error,
          ctx.requestId,
        ),
      );
  });
  return app;
}

/** Deeper than any real request (tool schemas included), far below a stack overflow. */
const MAX_JSON_DEPTH = 128;

function hasBom(buf: Buffer): boolean {
  return buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
}
