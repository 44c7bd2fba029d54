import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';

/** The `route` label of requests that matched no route (unknown paths, 405s, body errors before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The part of node-postgres' Pool the gauges read. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}

/**
 * The Prometheus metrics of one application instance, in a registry of its own (several instances in one
 * process, as in the tests, never share counters). Served by MetricsServer on METRICS_PORT.
 *
 * Label values are bounded: `route` is the matched route's template (`/api/organizations/:id`), never the raw
 * path, and `unmatched` for everything else; `method` is one of the known methods or `other`.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly enabled: boolean;

  private readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to finishing its response, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly schedulerTicks = new Counter({
    name: 'batch_export_scheduler_ticks_total',
    help: 'Ticks of the batch export scheduler, by outcome (success: the runs due were created; failure: the tick failed and the next one retries).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly runsCreated = new Counter({
    name: 'batch_export_runs_created_total',
    help: 'Batch export runs created by scheduler ticks of this process.',
    registers: [this.registry],
  });

  private readonly tickDuration = new Histogram({
    name: 'batch_export_scheduler_tick_duration_seconds',
    help: 'Duration of one batch export scheduler tick, successful or not.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  constructor(
    config: AppConfig,
    private readonly dataSource: DataSource,
  ) {
    this.enabled = config.get('METRICS_PORT') > 0;
    // Known outcomes start at 0, so a rate() over them is defined before the first failure.
    for (const outcome of ['success', 'failure']) this.schedulerTicks.labels(outcome).inc(0);
    this.runsCreated.inc(0);

    const pool = () => (this.dataSource.driver as unknown as { master?: PoolCounts }).master;
    const poolGauge = (name: string, help: string, read: (p: PoolCounts) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const p = pool();
          const value = p ? read(p) : undefined;
          if (value !== undefined) this.set(value);
        },
      });
    poolGauge(
      'db_pool_connections_in_use',
      'Database connections of the pool checked out by a query or transaction.',
      (p) => p.totalCount - p.idleCount,
    );
    poolGauge(
      'db_pool_connections_idle',
      'Open database connections of the pool not in use.',
      (p) => p.idleCount,
    );
    poolGauge(
      'db_pool_requests_waiting',
      'Queries or transactions waiting for a free connection of the pool.',
      (p) => p.waitingCount,
    );
    poolGauge(
      'db_pool_connections_max',
      'Largest number of connections the pool opens (DATABASE_POOL_SIZE).',
      (p) => p.options?.max,
    );

    if (this.enabled) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Express middleware timing every request to the end of its response. Installed first by configureApp, so it
   * also sees requests refused before a handler runs (401/403 by the guard, 404, 413, 415).
   */
  readonly httpMiddleware = (req: Request, res: Response, next: NextFunction): void => {
    const end = this.httpDuration.startTimer();
    res.once('finish', () => {
      const labels = {
        method: METHODS.has(req.method) ? req.method : 'other',
        route: routeTemplate(req),
        status: String(res.statusCode),
      };
      this.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };

  /**
   * Times one scheduler tick and counts its outcome and the runs it created; returns what `tick` returned and
   * rethrows what it threw.
   */
  async recordSchedulerTick<T extends { created: number }>(tick: () => Promise<T>): Promise<T> {
    const end = this.tickDuration.startTimer();
    try {
      const result = await tick();
      this.schedulerTicks.labels('success').inc();
      this.runsCreated.inc(result.created);
      return result;
    } catch (err) {
      this.schedulerTicks.labels('failure').inc();
      throw err;
    } finally {
      end();
    }
  }

  /** The registry in the Prometheus text exposition format. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * The template of the route that handled the request (`/api/organizations/:organization_id/domains/:id`), or
 * `unmatched`. Express keeps the matched route on `req.route`; catch-all routes count as unmatched.
 */
export function routeTemplate(req: Pick<Request, 'baseUrl'> & { route?: { path?: unknown } }): string {
  const path = req.route?.path;
  if (typeof path !== 'string' || path.includes('*')) return UNMATCHED_ROUTE;
  return `${req.baseUrl ?? ''}${path}` || '/';
}
