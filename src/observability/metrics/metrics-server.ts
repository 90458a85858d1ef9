import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import { observabilityConfig } from '../../config/observability.config';
import { MetricsService } from './metrics.service';

/**
 * `GET /metrics` on METRICS_PORT, a listener of its own with nothing else on it: no
 * client key and no token, so that it can stay inside the cluster network (a
 * NetworkPolicy or a port the Service does not expose) while the main port faces clients.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly metrics: MetricsService,
    @Inject(observabilityConfig.KEY)
    private readonly config: ConfigType<typeof observabilityConfig>,
  ) {}

  /** The port it listens on (METRICS_PORT, or the one picked for 0); undefined when off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { metricsPort, metricsHost } = this.config;
    if (metricsPort === undefined) {
      return;
    }
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
        return;
      }
      this.metrics.scrape().then(
        (text) =>
          res
            .writeHead(200, {
              'content-type': this.metrics.contentType,
              'cache-control': 'no-store',
            })
            .end(text),
        (err: unknown) => {
          this.logger.error(`metrics scrape failed: ${String(err)}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('Scrape failed\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(metricsPort, metricsHost, () => resolve());
    });
    this.server = server;
    this.logger.log(`Metrics on http://${metricsHost}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
