import { GatewayExpressAdapter } from './common/http/express-adapter';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './bootstrap';
import { ConfigValidationError } from './config';
import { LOG_LEVELS } from './config/app.config';
import { ConfigService } from '@nestjs/config';
import type { AllConfig } from './config';
import { CatalogError } from './catalog/catalog.loader';
import { createRootLogger, PinoNestLogger } from './common/logging/pino-logger';
import { ShutdownState } from './health/shutdown.state';
import { ConsoleSessions } from './console/console-session';
import { announceConsole } from './console/console.module';

async function main(): Promise<void> {
  // The level is read before config validation runs; a bad value is reported by it.
  const level = LOG_LEVELS.find((l) => l === process.env.LOG_LEVEL) ?? 'info';
  const logger = createRootLogger(level);
  // The log is buffered: a crash must not lose the lines that explain it.
  process.once('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    logger.flush(() => process.exit(1));
  });
  try {
    const app = await NestFactory.create<NestExpressApplication>(
      AppModule,
      new GatewayExpressAdapter(),
      {
        bodyParser: false,
        logger: new PinoNestLogger(logger),
        abortOnError: false,
      },
    );
    configureApp(app, logger);
    const { port, host, listenBacklog } = app
      .get<ConfigService<AllConfig, true>>(ConfigService)
      .get('app', { infer: true });
    // Nest hands its arguments to node's server.listen(port, host, backlog); its typings
    // stop at the host.
    const listen = app.listen.bind(app) as unknown as (
      port: number,
      host: string,
      backlog: number,
    ) => Promise<unknown>;
    await listen(port, host, listenBacklog);
    logger.info({ port, pid: process.pid }, `gateway listening on http://localhost:${port}`);
    announceConsole(app.get(ConsoleSessions), `http://localhost:${port}`, logger);
    // Own signal handling rather than enableShutdownHooks: Nest re-raises the signal after
    // close, which would kill the process before the asynchronous log writes are flushed.
    // SIGTERM (an orchestrator) first drains: readiness 503 while still serving. SIGINT
    // (Ctrl-C at a terminal) closes at once; a second signal exits without waiting.
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'shutdown requested');
      // Any signal after the first, of either kind, exits at once.
      process.off('SIGTERM', stop).off('SIGINT', stop);
      const force = (): void => logger.flush(() => process.exit(1));
      process.once('SIGTERM', force).once('SIGINT', force);
      const drained =
        signal === 'SIGTERM' ? app.get(ShutdownState).startDraining(signal) : Promise.resolve();
      drained
        .then(() => app.close())
        .catch((e: unknown) => logger.error({ err: e }, 'error during shutdown'))
        .finally(() => logger.flush(() => process.exit(0)));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (e) {
    if (e instanceof ConfigValidationError || e instanceof CatalogError) {
      logger.fatal(e.message);
    } else {
      logger.fatal({ err: e }, 'gateway failed to start');
    }
    // The log is buffered: flush it before exiting.
    logger.flush(() => process.exit(1));
  }
}

void main();
