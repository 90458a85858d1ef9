/**
 * The Nest floor proxy (issue 29): the least a gateway built on Nest and express must do on
 * POST /v1/chat/completions, on Nest's stock express adapter with its JSON body parser: a
 * bearer key check in a guard (401), the parsed body, a known model (404), a system prompt
 * (400), then an undici request (keep-alive Agent) to the upstream with the provider key
 * swapped in, relaying its status, content-type and bytes chunk by chunk (streams too, never
 * buffered). No logging, no validation library, no interceptors. The raw body Nest keeps
 * (`rawBody: true`) is what is forwarded, so nothing is serialized twice.
 * Run as a child process (`--upstream=<origin> --key=<secret>`); it tells its parent its port
 * over IPC.
 */
import 'reflect-metadata';
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  HttpException,
  Injectable,
  Module,
  Post,
  type RawBodyRequest,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

const UPSTREAM_AUTH = 'Bearer sk-bench-upstream';
const MODELS = new Set(['bench-model']);
const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const EXPECTED = `Bearer ${arg('key') ?? 'bench-key'}`;
const TARGET = `${arg('upstream') ?? 'http://127.0.0.1:8080'}/v1/chat/completions`;

function fail(status: number, message: string): HttpException {
  return new HttpException({ error: { message, type: 'invalid_request_error' } }, status);
}

@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.switchToHttp().getRequest<Request>().headers.authorization !== EXPECTED) {
      throw fail(401, 'bad key');
    }
    return true;
  }
}

@Controller('v1')
class ProxyController {
  private readonly dispatcher = new Agent({ keepAliveTimeout: 120_000, pipelining: 1 });

  @Post('chat/completions')
  @UseGuards(BearerGuard)
  async create(@Req() req: RawBodyRequest<Request>, @Res() res: Response): Promise<void> {
    const body = req.body as { model?: unknown; messages?: { role?: unknown }[] };
    if (typeof body?.model !== 'string' || !MODELS.has(body.model)) {
      throw fail(404, 'unknown model');
    }
    if (!Array.isArray(body.messages) || body.messages[0]?.role !== 'system') {
      throw fail(400, 'system prompt required');
    }
    let up: Awaited<ReturnType<typeof request>>;
    try {
      up = await request(TARGET, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers: { 'content-type': 'application/json', authorization: UPSTREAM_AUTH },
        body: req.rawBody,
      });
    } catch {
      throw fail(502, 'upstream failed');
    }
    res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type']) });
    up.body.on('data', (c: Buffer) => res.write(c));
    up.body.on('end', () => res.end());
    up.body.on('error', () => res.destroy());
  }
}

@Module({ controllers: [ProxyController], providers: [BearerGuard] })
class ProxyModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(ProxyModule, {
    logger: false,
    rawBody: true,
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.getHttpServer().keepAliveTimeout = 120_000;
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  process.send?.({ type: 'listening', port });
}

if (require.main === module) {
  void main();
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}
