import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Inject, Req, Res } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import type { Request, Response } from 'express';
import { Public } from '../../common/public.decorator';
import { AuthenticationError, RouteNotFoundError } from '../../common/errors/gateway-errors';
import { observabilityConfig } from '../../config/observability.config';
import { MetricsService } from './metrics.service';

/** Compares digests, so neither the length nor the content of the token leaks by timing. */
function sameToken(given: string, expected: Buffer): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), expected);
}

/**
 * `GET /metrics` on the main port, for a scraper holding METRICS_TOKEN as a bearer token.
 * Public to the client-key guard, and a client key is not accepted here: only the token.
 * Without METRICS_TOKEN the route answers 404, as if it did not exist (METRICS_PORT
 * serves metrics then, if set).
 */
@Controller('metrics')
@Public()
export class MetricsController {
  private readonly token?: Buffer;

  constructor(
    private readonly metrics: MetricsService,
    @Inject(observabilityConfig.KEY) config: ConfigType<typeof observabilityConfig>,
  ) {
    if (config.metricsToken !== undefined) {
      this.token = createHash('sha256').update(config.metricsToken).digest();
    }
  }

  @Get()
  @Header('cache-control', 'no-store')
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (this.token === undefined) {
      throw new RouteNotFoundError(req.method, req.path);
    }
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (match === null || !sameToken(match[1], this.token)) {
      throw new AuthenticationError(
        'GET /metrics needs the metrics token (METRICS_TOKEN) as a bearer token.',
        'invalid_metrics_token',
      );
    }
    res.setHeader('content-type', this.metrics.contentType);
    res.send(await this.metrics.scrape());
  }
}
