/**
 * A bare Nest app on express doing nothing but answering a POST with a fixed JSON body
 * (JSON body parser on, no guards, no logging): the floor of the framework itself, so the
 * report can say which part of the gateway's cost is Nest and express.
 * Run as a child process; it tells its parent its port over IPC.
 */
import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';

const ANSWER = { id: 'chatcmpl-bare', object: 'chat.completion', choices: [] };

@Controller('v1')
class BareController {
  @Post('chat/completions')
  @HttpCode(200)
  create(@Body() body: { model?: string }): unknown {
    return { ...ANSWER, model: body.model };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(BareModule, { logger: false });
  app.disable('x-powered-by');
  app.set('etag', false);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  process.send?.({ type: 'listening', port });
}

if (require.main === module) {
  void main();
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}
