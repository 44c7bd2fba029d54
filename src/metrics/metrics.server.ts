import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { explainListenError } from '../common/http/port-in-use.js';
import { AppConfig } from '../config/config.js';
import { MetricsService } from './metrics.service.js';

/**
 * A plain HTTP server of its own on METRICS_PORT (HOST), apart from the API port: `GET /metrics` answers the
 * Prometheus text format, anything else 404. Started with the application (when METRICS_PORT is not 0) and
 * closed last on shutdown, so the final scrapes during a drain still succeed.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: Server | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.metrics.enabled) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
        return;
      }
      this.metrics.scrape().then(
        (body) => {
          res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
          res.end(req.method === 'HEAD' ? undefined : body);
        },
        (err: unknown) => {
          this.logger.error({ err }, 'collecting the metrics failed');
          res
            .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
            .end('Collecting the metrics failed\n');
        },
      );
    });
    const port = this.config.get('METRICS_PORT');
    const host = this.config.get('HOST');
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(explainListenError(err, 'METRICS_PORT', port, host)));
      server.listen(port, host, () => {
        server.removeAllListeners('error');
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on http://${this.config.get('HOST')}:${this.port}/metrics`);
  }

  /** The port the metrics server listens on; null when it does not run. */
  get port(): number | null {
    return (this.server?.address() as AddressInfo | null)?.port ?? null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
