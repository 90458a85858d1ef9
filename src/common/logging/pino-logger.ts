import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../../config/app.config';

/** Log lines are written once this many bytes are buffered... */
const LOG_BUFFER_BYTES = 4096;
/** ...or after this many milliseconds, whichever comes first. */
const LOG_FLUSH_MS = 100;

/** Paths masked in every line but the access log's (see {@link accessLogger}). */
const REDACTED_PATHS = ['headers.authorization', 'headers["x-api-key"]', '*.apiKey', 'apiKey'];

/**
 * The process-wide pino logger: JSON lines on stdout (or `destination`). Asynchronous,
 * buffered writes keep stdout off the request path: under load one write carries many
 * access-log lines instead of one system call each (seen in the CPU profile), and a quiet
 * gateway still shows each line within LOG_FLUSH_MS. main.ts flushes the buffer before
 * every exit.
 */
export function createRootLogger(
  level: LogLevel,
  destination: DestinationStream = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  }),
): Logger {
  return pino(
    {
      level,
      base: { service: 'reasoning-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Belt and braces: these never reach the logger, and would be masked if they did.
      redact: {
        paths: REDACTED_PATHS,
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * The logger of the one access-log line per request: the root's level, destination and
 * fields, without its redaction. That line is built from a fixed list of request facts
 * (ids, route, status, model, usage; see requestContextMiddleware), none of which can hold
 * a header or a key, while the root's wildcard path (`*.apiKey`) sends every value of
 * every line through the redactor: about 2% of the gateway's CPU under load.
 */
export function accessLogger(root: Logger): Logger {
  return root.child({}, { redact: [] });
}

/** Routes Nest's own log calls (boot, lifecycle, unexpected errors) into pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }

  error(message: unknown, stack?: string, context?: string): void {
    this.logger.error({ context, stack }, String(message));
  }

  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }

  fatal(message: unknown, context?: string): void {
    this.logger.fatal({ context }, String(message));
  }
}
