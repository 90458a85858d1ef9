import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application } from 'express';
import type { Logger } from 'pino';
import { AuditLog } from '../audit/audit-log';
import { AdminAuth } from './admin-auth';
import { ConsoleSessions } from './console-session';
import { ConsoleSessionModule } from './console-session.module';
import { consoleRouter } from './console.router';

/**
 * The web console at CONSOLE_PATH. Its router is mounted on that prefix alone, so its
 * security headers, sessions and static files never run for the generation endpoints.
 */
@Module({ imports: [ConsoleSessionModule] })
export class ConsoleModule implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    private readonly sessions: ConsoleSessions,
    private readonly auth: AdminAuth,
    private readonly audit: AuditLog,
  ) {}

  onModuleInit(): void {
    if (!this.sessions.enabled) {
      return;
    }
    // A plain Express mount rather than a controller: the path is configuration, and the
    // console's pages are not part of the gateway's API document.
    const app = this.adapter.httpAdapter.getInstance<Application>();
    app.use(this.sessions.path, consoleRouter(this.sessions, this.auth, this.audit));
  }
}

/**
 * Logs where the console is and, when no admin token is configured, its one-time
 * sign-in link (as the development key is printed: it is meant for the person at the
 * terminal, and it stops working once used).
 */
export function announceConsole(sessions: ConsoleSessions, origin: string, logger: Logger): void {
  if (!sessions.enabled) {
    return;
  }
  const shown = sessions.publicUrl ?? origin;
  sessions.announcedOrigin = shown;
  logger.info(`console at ${shown}${sessions.path}`);
  const link = sessions.oneTimeLink(shown);
  if (link !== undefined) {
    logger.info(
      `No GATEWAY_ADMIN_TOKEN configured: sign in to the console once with ${link} (single use)`,
    );
  }
}
