import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AllConfig } from '../config';

/**
 * Graceful shutdown: on SIGTERM readiness turns 503 at once, Nest then closes the
 * server (no new connections, idle keep-alives dropped) while in-flight streams run
 * on; whatever is still open after SHUTDOWN_TIMEOUT_MS is cut.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ShutdownState.name);
  draining = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<AllConfig, true>,
  ) {}

  beforeApplicationShutdown(signal?: string): void {
    this.draining = true;
    const timeoutMs = this.config.get('app', { infer: true }).shutdownTimeoutMs;
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server) {
      return;
    }
    this.logger.log(`shutting down (${signal ?? 'close'}): draining for up to ${timeoutMs} ms`);
    // Connections whose last stream just finished turn idle after close() was called;
    // sweep them so a keep-alive socket does not hold the process until the timeout.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 100).unref();
    server.once('close', () => clearInterval(sweep));
    setTimeout(() => {
      clearInterval(sweep);
      server.closeAllConnections();
    }, timeoutMs).unref();
  }
}
