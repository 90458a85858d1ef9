import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application } from 'express';
import type { Server } from 'node:http';
import { ServerShuttingDownError } from '../common/errors/gateway-errors';
import { activeStreamsOf } from '../common/sse/active-streams';
import type { AllConfig } from '../config';

/** Time given to the error frames written at the deadline to reach the client. */
const FLUSH_MS = 100;

/**
 * Graceful shutdown in two phases.
 * 1. {@link startDraining} (SIGTERM): readiness answers 503 while the server still accepts
 *    connections for SHUTDOWN_DRAIN_DELAY_MS, so that a load balancer sees the 503 and
 *    stops sending before connections are refused.
 * 2. Nest closes the server (no new connections, idle keep-alives dropped) while in-flight
 *    streams run on. At SHUTDOWN_TIMEOUT_MS each stream still open is ended with its
 *    format's error event (so the client, the access log and the limits see it end), then
 *    the remaining sockets are closed.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ShutdownState.name);
  draining = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<AllConfig, true>,
  ) {}

  /**
   * Turns readiness to 503 and resolves after the drain delay, during which requests are
   * still served; the caller closes the app afterwards.
   */
  async startDraining(signal: string): Promise<void> {
    this.draining = true;
    const delayMs = this.config.get('app', { infer: true }).shutdownDrainDelayMs;
    if (delayMs > 0) {
      this.logger.log(`${signal}: readiness is 503; serving on for ${delayMs} ms before closing`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }

  beforeApplicationShutdown(signal?: string): void {
    this.draining = true;
    const timeoutMs = this.config.get('app', { infer: true }).shutdownTimeoutMs;
    const adapter = this.adapterHost.httpAdapter;
    const server = adapter?.getHttpServer() as Server | undefined;
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
      const ended = activeStreamsOf(adapter.getInstance<Application>()).endAll(
        new ServerShuttingDownError(),
      );
      if (ended > 0) {
        this.logger.warn(`shutdown deadline: ended ${ended} open stream(s) with an error event`);
      }
      setTimeout(() => server.closeAllConnections(), ended > 0 ? FLUSH_MS : 0).unref();
    }, timeoutMs).unref();
  }
}
