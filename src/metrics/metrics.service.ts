import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppConfig } from '../config/config.js';
import { DatabaseProbe, type PoolCounts } from '../database/database-probe.js';

/** The `route` label of requests that matched no route (unknown paths, 405s, body errors before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const QUEUE_DEPTH_MAX_AGE_MS = 5000;
const QUEUE_DEPTH_WAIT_MS = 500;

/** The batch export queue's depth, as the queue gauges report it. */
export interface BatchExportQueueDepth {
  ready: number;
  deferred: number;
  active: number;
  /** Scheduled runs waiting for their dispatch to write their job. */
  undispatched: number;
  oldestReadySeconds: number;
}

/** How far behind the batch exports are, as the lag gauges report it (read from the database). */
export interface BatchExportLagState {
  byType: { destinationType: string; exports: number; maxSeconds: number }[];
  worst: { batchExportId: string; destinationType: string; seconds: number }[];
}

/** The capture memory budget, as its gauges report it. */
export interface CaptureBudgetState {
  inUse: number;
  capacity: number;
  exhaustedSeconds: number;
}

/**
 * The Prometheus metrics of one application instance, in a registry of its own (several instances in one
 * process, as in the tests, never share counters). Served by MetricsServer on METRICS_PORT.
 *
 * Label values are bounded: `route` is the matched route's template (`/api/organizations/:id`), never the raw
 * path, and `unmatched` for everything else; `method` is one of the known methods or `other`.
 */
/**
 * A value the gauges read from the database: read at most every QUEUE_DEPTH_MAX_AGE_MS, and a scrape waits for a
 * read at most QUEUE_DEPTH_WAIT_MS (an exhausted pool must not stall the scrape: it then reports the last value).
 */
class CachedReading<T> {
  reader: (() => Promise<T>) | null = null;
  private last: { value: T; at: number } | null = null;
  private refresh: Promise<void> | null = null;

  async read(): Promise<T | null> {
    const reader = this.reader;
    if (!reader) return null;
    if (!this.last || Date.now() - this.last.at > QUEUE_DEPTH_MAX_AGE_MS) {
      this.refresh ??= reader()
        .then((value) => {
          this.last = { value, at: Date.now() };
        })
        .catch(() => undefined)
        .finally(() => {
          this.refresh = null;
        });
      await Promise.race([this.refresh, new Promise((r) => setTimeout(r, QUEUE_DEPTH_WAIT_MS).unref())]);
    }
    return this.last?.value ?? null;
  }
}

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

  private readonly runsFinished = new Counter({
    name: 'batch_export_runs_finished_total',
    help: 'Batch export runs ended by workers of this process, by final status (Completed, Failed, FailedRetryable, Cancelled) and destination type (sum over the instances for the whole service).',
    labelNames: ['status', 'destination_type'] as const,
    registers: [this.registry],
  });

  private readonly recordsExported = new Counter({
    name: 'batch_export_records_exported_total',
    help: 'Records delivered by completed batch export runs of this process, by destination type.',
    labelNames: ['destination_type'] as const,
    registers: [this.registry],
  });

  private readonly unpackedBytes = new Gauge({
    name: 'recording_unpacked_bytes',
    help: 'Gzip bytes of recording chunks committed to the database and not yet packed into the object store (RECORDING_S3_LAYOUT=packed), as last measured by this process; capture answers 503 past RECORDING_UNPACKED_MAX_BYTES.',
    registers: [this.registry],
  });

  private readonly unpackedChunks = new Gauge({
    name: 'recording_unpacked_chunks',
    help: 'Recording chunks committed to the database and not yet packed into the object store, as last measured by this process.',
    registers: [this.registry],
  });

  private readonly unpackedOldest = new Gauge({
    name: 'recording_unpacked_oldest_seconds',
    help: 'Age of the oldest recording chunk not yet packed into the object store (0 when none waits): how far behind the packer is.',
    registers: [this.registry],
  });

  private readonly packPasses = new Counter({
    name: 'recording_pack_passes_total',
    help: 'Packer passes of this process, by outcome (packed: one object written, verified and indexed; failed: the next tick retries).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly packedBytes = new Counter({
    name: 'recording_packed_bytes_total',
    help: 'Gzip bytes of recording chunks this process packed into objects.',
    registers: [this.registry],
  });

  private readonly bytesExported = new Counter({
    name: 'batch_export_bytes_exported_total',
    help: 'Bytes delivered by completed batch export runs of this process (as written to the destination), by destination type.',
    labelNames: ['destination_type'] as const,
    registers: [this.registry],
  });

  private readonly runDuration = new Histogram({
    name: 'batch_export_run_duration_seconds',
    help: 'Duration of the last attempt of batch export runs ended by this process, by final status.',
    labelNames: ['status'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  /** Reads the batch export job queue (set by the batch export module); null until then. */
  private readonly queueDepth = new CachedReading<BatchExportQueueDepth>();
  private readonly lag = new CachedReading<BatchExportLagState>();

  constructor(
    config: AppConfig,
    private readonly database: DatabaseProbe,
  ) {
    this.enabled = config.get('METRICS_PORT') > 0;
    // Known outcomes start at 0, so a rate() over them is defined before the first failure.
    for (const outcome of ['success', 'failure']) this.schedulerTicks.labels(outcome).inc(0);
    this.runsCreated.inc(0);

    const pool = () => this.database.poolCounts();
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
    const probe = this.database;
    const apiShareGauge = (
      name: string,
      help: string,
      read: (c: ReturnType<DatabaseProbe['apiShareCounts']>) => number,
    ) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read(probe.apiShareCounts()));
        },
      });
    apiShareGauge(
      'db_pool_api_connections_in_use',
      'Database connections of the pool held by /api handlers (at most DATABASE_POOL_SIZE minus DATABASE_POOL_RESERVE).',
      (c) => c.inUse,
    );
    apiShareGauge(
      'db_pool_api_requests_waiting',
      "/api checkouts waiting for a connection of the API's share of the pool.",
      (c) => c.waiting,
    );

    const read = () => this.queueDepth.read();
    const lag = () => this.lag.read();
    new Gauge({
      name: 'batch_export_lag_seconds',
      help: 'Seconds from the end of the newest interval an active (not paused, not deleted) batch export completed to now, for the BATCH_EXPORT_LAG_METRIC_EXPORTS exports furthest behind (from the database: the same on every instance).',
      labelNames: ['batch_export_id', 'destination_type'] as const,
      registers: [this.registry],
      async collect() {
        const state = await lag();
        if (!state) return;
        this.reset();
        for (const e of state.worst) this.labels(e.batchExportId, e.destinationType).set(e.seconds);
      },
    });
    new Gauge({
      name: 'batch_export_lag_max_seconds',
      help: 'The largest lag (see batch_export_lag_seconds) among the active batch exports of each destination type (from the database: the same on every instance).',
      labelNames: ['destination_type'] as const,
      registers: [this.registry],
      async collect() {
        const state = await lag();
        if (!state) return;
        this.reset();
        for (const t of state.byType) this.labels(t.destinationType).set(t.maxSeconds);
      },
    });
    new Gauge({
      name: 'batch_export_active_exports',
      help: 'Active (not paused, not deleted) batch exports, by destination type (from the database: the same on every instance).',
      labelNames: ['destination_type'] as const,
      registers: [this.registry],
      async collect() {
        const state = await lag();
        if (!state) return;
        this.reset();
        for (const t of state.byType) this.labels(t.destinationType).set(t.exports);
      },
    });
    new Gauge({
      name: 'batch_export_queue_jobs',
      help: "Batch export run jobs in the queue (all processes), by state: ready (could start now), deferred (a retry backoff or a paused export), active; and undispatched: scheduled runs whose job their dispatch has not written yet (a tick's runs wait for a worker process's dispatch loop).",
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        const depth = await read().catch(() => null);
        if (!depth) return;
        this.labels('ready').set(depth.ready);
        this.labels('deferred').set(depth.deferred);
        this.labels('active').set(depth.active);
        this.labels('undispatched').set(depth.undispatched);
      },
    });
    new Gauge({
      name: 'batch_export_queue_oldest_ready_seconds',
      help: 'How long the oldest batch export run job that could start, or the oldest dispatch of scheduled runs not taken yet, has been waiting (0 when none waits).',
      registers: [this.registry],
      async collect() {
        const depth = await read().catch(() => null);
        if (depth) this.set(depth.oldestReadySeconds);
      },
    });

    const budget = () => this.captureBudgetReader?.() ?? null;
    new Gauge({
      name: 'capture_memory_budget_in_use_bytes',
      help: 'Estimated memory the capture requests of this process hold now, of CAPTURE_MEMORY_BUDGET.',
      registers: [this.registry],
      collect() {
        const b = budget();
        if (b) this.set(b.inUse);
      },
    });
    new Gauge({
      name: 'capture_memory_budget_bytes',
      help: 'CAPTURE_MEMORY_BUDGET: the memory the capture requests of this process may hold at once.',
      registers: [this.registry],
      collect() {
        const b = budget();
        if (b) this.set(b.capacity);
      },
    });
    new Gauge({
      name: 'capture_memory_budget_exhausted_seconds',
      help: 'How long the capture memory budget has been exhausted (requests refused 503 or waiting, none ending since); 0 when it is not. Readiness fails past twice REQUEST_TIMEOUT_MS.',
      registers: [this.registry],
      collect() {
        const b = budget();
        if (b) this.set(b.exhaustedSeconds);
      },
    });

    if (this.enabled) collectDefaultMetrics({ register: this.registry });
  }

  private captureBudgetReader: (() => CaptureBudgetState) | null = null;

  /** Where the capture memory budget gauges read from (the capture module's budget). */
  setCaptureBudgetReader(reader: () => CaptureBudgetState): void {
    this.captureBudgetReader = reader;
  }

  /** Where the lag gauges read from (the batch export module's query of the exports table). */
  setBatchExportLagReader(reader: () => Promise<BatchExportLagState>): void {
    this.lag.reader = reader;
  }

  /**
   * Starts the run counters of every status and destination type at 0, so a rate() over them is defined before
   * the first run of a type ends.
   */
  initBatchExportRunSeries(destinationTypes: readonly string[]): void {
    for (const type of destinationTypes) {
      for (const status of ['Completed', 'Failed', 'FailedRetryable', 'Cancelled']) {
        this.runsFinished.labels(status, type).inc(0);
      }
      this.recordsExported.labels(type).inc(0);
      this.bytesExported.labels(type).inc(0);
    }
  }

  /** Where the queue gauges read from (the batch export module's queue). */
  setBatchExportQueueReader(reader: () => Promise<BatchExportQueueDepth>): void {
    this.queueDepth.reader = reader;
  }

  /** The unpacked recording chunks the packer measured. */
  recordPackBacklog(backlog: { chunks: number; bytes: number; oldestSeconds: number }): void {
    this.unpackedBytes.set(backlog.bytes);
    this.unpackedChunks.set(backlog.chunks);
    this.unpackedOldest.set(backlog.oldestSeconds);
  }

  /** Counts one packer pass: its outcome and the bytes it packed. */
  recordPackPass(outcome: 'packed' | 'failed', bytes = 0): void {
    this.packPasses.labels(outcome).inc();
    if (bytes) this.packedBytes.inc(bytes);
  }

  /**
   * Counts a batch export run that ended: its status and destination type, what it delivered and its last
   * attempt's duration.
   */
  recordBatchExportRun(
    status: string,
    destinationType: string,
    records: number,
    bytes: number,
    seconds: number | null,
  ): void {
    this.runsFinished.labels(status, destinationType).inc();
    if (records) this.recordsExported.labels(destinationType).inc(records);
    if (bytes) this.bytesExported.labels(destinationType).inc(bytes);
    if (seconds !== null) this.runDuration.labels(status).observe(seconds);
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
