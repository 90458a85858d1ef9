import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { GatewayRequest } from '../request-context';
import { accessLogger } from './pino-logger';

/** Metrics and traces, told when each request starts and ends (see RequestObserver). */
export interface RequestHooks {
  started(req: GatewayRequest): void;
  ended(
    req: GatewayRequest,
    res: Response,
    end: { latencyMs: number; outcome: 'completed' | 'client_closed' },
  ): void;
}

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * First middleware of every request: assigns the request id (the client's `x-request-id`
 * when it is sane), echoes it as `x-request-id` and `request-id` (the header each SDK
 * reads), and writes one access-log line when the response is over. The line carries
 * ids, model, provider, status, latency and token usage; never bodies or keys.
 */
export function requestContextMiddleware(root: Logger, hooks: readonly RequestHooks[] = []) {
  const logger = accessLogger(root);
  return (request: Request, res: Response, next: NextFunction): void => {
    const req = request as GatewayRequest;
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming)
        ? incoming
        : `req_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    req.ctx = { requestId, startedAt: process.hrtime.bigint() };
    res.setHeader('x-request-id', requestId);
    res.setHeader('request-id', requestId);
    for (const hook of hooks) {
      hook.started(req);
    }
    // 'close' comes once per response; on() spares once()'s wrapper objects per request.
    res.on('close', () => {
      const ctx = req.ctx;
      const latencyMs = Number(process.hrtime.bigint() - ctx.startedAt) / 1e6;
      const outcome = res.writableFinished ? 'completed' : 'client_closed';
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          latencyMs: Math.round(latencyMs * 100) / 100,
          outcome,
          keyId: ctx.keyId,
          model: ctx.model,
          provider: ctx.provider,
          stream: ctx.stream,
          attempts: ctx.attempts,
          cache: ctx.cache,
          usage: ctx.usage,
          protections: ctx.protections,
          protectionUsage: ctx.protectionUsage,
          errorCode: ctx.errorCode ?? undefined,
        },
        'request',
      );
      const end = { latencyMs, outcome } as const;
      for (const hook of hooks) {
        hook.ended(req, res, end);
      }
    });
    next();
  };
}
