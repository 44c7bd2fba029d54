import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/config.js';
import { ApiPoolShare } from '../../database/pool-shares.js';
import {
  type RecordingVisibility,
  RecordingVisibilityService,
} from '../../recording-access-rules/recording-visibility.service.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { BatchExportsRepository } from '../batch-exports.repository.js';
import { DESTINATION_TYPES, secretKeys } from '../destinations.js';
import {
  BatchExportRunsRepository,
  type ClaimedRun,
  type RunOutcome,
} from './batch-export-runs.repository.js';
import { createWriter } from './destinations/index.js';
import type { DeliveryContext, RunLogLevel } from './destinations/destination.js';
import { EgressPolicy } from './egress.js';
import { AttemptStopped, ExportError, scrubSecrets } from './export-errors.js';
import { ExportModels } from './export-models.js';
import { resolveIncremental } from '../incremental.js';
import { ExportSourceRepository, type SourceRange } from './export-source.repository.js';
import { NotificationsRepository } from './notifications.repository.js';
import { RunNotifications } from './run-notifications.js';
import { RunQueue, type FairnessCaps } from './run-queue.js';
import { SlotWaitsRepository } from './slot-waits.repository.js';

/** How often a running attempt checks whether its run was cancelled. */
const CANCEL_CHECK_MS = 1000;
/** How often the dead letters of the queue are looked at (runs whose last attempt lost its worker). */
const DEAD_LETTER_CHECK_MS = 30_000;
/**
 * How long a stopped attempt's delivery may take to wind down (close its connections) before the worker
 * records the outcome anyway and frees its slot: I/O that ignores the stop cannot hold the slot.
 */
const STOP_GRACE_MS = 5000;
/** A worker that met an organization at its cap looks again after this pause (the queue skips that organization). */
const OVER_CAP_PAUSE_MS = 250;

const sleep = (ms: number, wake: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (wake.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    wake.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * The batch export workers of this process (unless BATCH_EXPORT_WORKERS=false): BATCH_EXPORT_WORKER_CONCURRENCY
 * loops, each claiming the next runnable run from the job queue, delivering it and recording the outcome.
 *
 * While a run executes, its attempt reports to the queue (heartbeat: a killed worker's run is taken up again
 * by another one after BATCH_EXPORT_HEARTBEAT_SECONDS) and checks every second whether the run was cancelled
 * (a cancelled run stops within about a second). An attempt has BATCH_EXPORT_ATTEMPT_TIMEOUT_MS in all: then it
 * is stopped, fails retryably and frees its slot. On shutdown the loops stop claiming, the runs in progress
 * get BATCH_EXPORT_DRAIN_TIMEOUT_MS to finish, and those still going are stopped and handed back.
 */
@Injectable()
export class BatchExportWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BatchExportWorker.name);
  private readonly stopping = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly running = new Map<string, AbortController>();
  private readonly egress: EgressPolicy;

  constructor(
    private readonly runs: BatchExportRunsRepository,
    private readonly source: ExportSourceRepository,
    private readonly queue: RunQueue,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: MetricsService,
    private readonly notifications: RunNotifications,
    private readonly notificationsRepository: NotificationsRepository,
    private readonly slotWaits: SlotWaitsRepository,
    private readonly poolShare: ApiPoolShare,
    private readonly recordingVisibility: RecordingVisibilityService,
    private readonly exports: BatchExportsRepository,
    private readonly models: ExportModels,
  ) {
    this.egress = new EgressPolicy(config.allowPrivateDestinations, config.embeddedDatabasePort);
  }

  get enabled(): boolean {
    return this.config.get('BATCH_EXPORT_WORKERS');
  }

  /** Runs executing in this process now. */
  get inFlight(): number {
    return this.running.size;
  }

  onApplicationBootstrap(): void {
    this.metrics.setBatchExportQueueReader(() => this.queue.depth());
    this.metrics.initBatchExportRunSeries(DESTINATION_TYPES);
    this.metrics.setBatchExportLagReader(() =>
      this.notificationsRepository.lag(this.clock.now(), this.config.get('BATCH_EXPORT_LAG_METRIC_EXPORTS')),
    );
    if (!this.enabled) return;
    const concurrency = this.config.get('BATCH_EXPORT_WORKER_CONCURRENCY');
    // Each running export holds a connection for its whole read: taken from the API's share, not the reserve.
    this.poolShare.shares.holdOutsideApi(concurrency);
    for (let slot = 0; slot < concurrency; slot++) this.loops.push(this.loop());
    this.loops.push(this.dispatchLoop(), this.deadLetterLoop(), this.slotWaitLoop(), this.notificationLoop());
    this.logger.log({ concurrency }, 'batch export workers started');
  }

  async onModuleDestroy(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    if (!this.loops.length) return;
    const drained = Promise.all(this.loops);
    const timeout = this.config.get('BATCH_EXPORT_DRAIN_TIMEOUT_MS');
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeout))),
    ]);
    clearTimeout(timer);
    if (late) {
      this.logger.warn(
        { runs: [...this.running.keys()] },
        'batch export runs still in progress at the drain deadline: stopping them; they will be taken up again',
      );
      for (const controller of this.running.values()) controller.abort(new AttemptStopped('shutdown'));
      await drained;
    }
    this.logger.log('batch export workers stopped');
  }

  private async loop(): Promise<void> {
    const poll = this.config.get('BATCH_EXPORT_POLL_INTERVAL_MS');
    while (!this.stopping.signal.aborted) {
      try {
        const result = await this.runs.claimNext(
          this.clock.now(),
          this.config.get('BATCH_EXPORT_MAX_ATTEMPTS'),
          this.caps(),
        );
        if (result.kind === 'claimed') {
          await this.execute(result.claim);
          continue;
        }
        if (result.kind === 'gave-up') {
          this.metrics.recordBatchExportRun('FailedRetryable', result.destinationType, 0, 0, null);
          await this.notifications.runFailed(result.runId, null);
        }
        if (result.kind === 'over-cap') await sleep(Math.min(poll, OVER_CAP_PAUSE_MS), this.stopping.signal);
        if (result.kind === 'none') await sleep(poll, this.stopping.signal);
      } catch (err) {
        this.reportLoopError(err, 'claiming a batch export run failed');
        await sleep(poll * 5, this.stopping.signal);
      }
    }
  }

  /** The fairness caps: runs executing at once per organization, project and user (0: none). */
  private caps(): FairnessCaps {
    return {
      organization: this.config.get('BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION'),
      project: this.config.get('BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_PROJECT'),
      user: this.config.get('BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_USER'),
    };
  }

  /** Every BATCH_EXPORT_SUPERVISE_SECONDS, logs the runs that waited past BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS. */
  private async slotWaitLoop(): Promise<void> {
    const seconds = this.config.get('BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS');
    if (!seconds) return;
    while (!this.stopping.signal.aborted) {
      try {
        const waiting = await this.slotWaits.logLongWaits(this.clock.now(), seconds, this.caps());
        if (waiting.length) {
          this.logger.warn(
            {
              runs: waiting.map((w) => ({
                runId: w.runId,
                batchExportId: w.batchExportId,
                waited: w.waited,
              })),
            },
            `batch export runs waited more than ${seconds} s for a worker slot`,
          );
        }
      } catch (err) {
        this.reportLoopError(err, 'looking for batch export runs waiting for a slot failed');
      }
      await sleep(this.config.get('BATCH_EXPORT_SUPERVISE_SECONDS') * 1000, this.stopping.signal);
    }
  }

  private async deadLetterLoop(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      try {
        while (!this.stopping.signal.aborted) {
          const settled = await this.runs.settleDeadLetter(this.clock.now());
          if (!settled) break;
          if (settled.failed) {
            this.metrics.recordBatchExportRun('FailedRetryable', settled.failed.destinationType, 0, 0, null);
            await this.notifications.runFailed(settled.failed.runId, null);
          }
        }
      } catch (err) {
        this.reportLoopError(err, 'settling lost batch export runs failed');
      }
      await sleep(DEAD_LETTER_CHECK_MS, this.stopping.signal);
    }
  }

  /**
   * Carries out the scheduler's dispatches (the jobs and log lines of the runs a tick created), one after the other;
   * idle, looks again every poll interval. Every worker process runs one: the queue shares the dispatches.
   */
  private async dispatchLoop(): Promise<void> {
    const poll = this.config.get('BATCH_EXPORT_POLL_INTERVAL_MS');
    while (!this.stopping.signal.aborted) {
      try {
        if ((await this.runs.dispatchNext()) !== null) continue;
      } catch (err) {
        this.reportLoopError(err, 'queueing the jobs of scheduled batch export runs failed');
        await sleep(poll * 5, this.stopping.signal);
        continue;
      }
      await sleep(poll, this.stopping.signal);
    }
  }

  /** Delivers the notification webhooks due, one after the other; idle, looks again every poll interval. */
  private async notificationLoop(): Promise<void> {
    const poll = this.config.get('BATCH_EXPORT_POLL_INTERVAL_MS');
    while (!this.stopping.signal.aborted) {
      try {
        if (await this.notifications.deliverNext(this.stopping.signal)) continue;
      } catch (err) {
        this.reportLoopError(err, 'delivering a batch export notification webhook failed');
      }
      await sleep(poll, this.stopping.signal);
    }
  }

  private reportLoopError(err: unknown, message: string): void {
    if (isDatabaseUnavailable(err)) {
      this.logger.warn({ reason: (err as Error).message }, `database unavailable: ${message}`);
    } else {
      this.logger.error({ err }, message);
    }
  }

  /** Executes one claimed attempt to its end and records the outcome. */
  async execute(claim: ClaimedRun): Promise<void> {
    const controller = new AbortController();
    this.running.set(claim.run.id, controller);
    const started = performance.now();
    const secrets = secretKeys(claim.batchExport.destinationType).map((k) => claim.batchExport.config[k]);
    const stop = (reason: AttemptStopped['reason']) => {
      if (!controller.signal.aborted) controller.abort(new AttemptStopped(reason));
    };
    const cancelCheck = setInterval(() => {
      void this.runs
        .statusOf(claim.run.id)
        .then((status) => {
          if (status !== 'Running') stop('cancelled');
        })
        .catch(() => undefined);
    }, CANCEL_CHECK_MS);
    const heartbeat = setInterval(
      () => {
        void this.queue
          .touch(claim.attempt)
          .then((held) => {
            if (!held) stop('lost');
          })
          .catch(() => undefined);
      },
      (this.config.get('BATCH_EXPORT_HEARTBEAT_SECONDS') * 1000) / 3,
    );
    const attemptTimeoutMs = this.config.get('BATCH_EXPORT_ATTEMPT_TIMEOUT_MS');
    const deadline = setTimeout(() => stop('deadline'), attemptTimeoutMs);
    let outcome: RunOutcome;
    try {
      let settled = false;
      const delivery = this.deliver(claim, controller.signal, secrets).finally(() => (settled = true));
      delivery.catch(() => undefined);
      const { records, bytes } = await Promise.race([
        delivery,
        this.abandonAfterStop(claim, controller.signal, () => settled),
      ]);
      if (controller.signal.aborted) throw controller.signal.reason;
      outcome = { kind: 'completed', records, bytes };
    } catch (err) {
      const stopped = controller.signal.aborted ? (controller.signal.reason as AttemptStopped).reason : null;
      if (stopped === 'deadline') {
        outcome = {
          kind: 'failed',
          message:
            `The attempt did not end within ${attemptTimeoutMs} ms (BATCH_EXPORT_ATTEMPT_TIMEOUT_MS): ` +
            'it was stopped and its worker freed.',
          retryable: true,
        };
      } else if (stopped) {
        outcome = { kind: 'stopped', reason: stopped };
      } else if (err instanceof ExportError) {
        outcome = { kind: 'failed', message: scrubSecrets(err.message, secrets), retryable: err.retryable };
      } else {
        // Anything else (this service's own database, a bug) is worth another attempt.
        outcome = {
          kind: 'failed',
          message: scrubSecrets(`Unexpected error: ${(err as Error)?.message ?? String(err)}`, secrets),
          retryable: true,
        };
        this.logger.warn(
          { runId: claim.run.id, reason: outcome.message },
          'batch export attempt failed unexpectedly',
        );
      }
    } finally {
      clearTimeout(deadline);
      clearInterval(cancelCheck);
      clearInterval(heartbeat);
      this.running.delete(claim.run.id);
    }
    const maxAttempts = this.config.get('BATCH_EXPORT_MAX_ATTEMPTS');
    const result = await this.runs.finish(claim, outcome, this.clock.now(), maxAttempts);
    const seconds = (performance.now() - started) / 1000;
    if (result.status !== 'Running') {
      this.metrics.recordBatchExportRun(
        result.status,
        claim.batchExport.destinationType,
        outcome.kind === 'completed' ? outcome.records : 0,
        outcome.kind === 'completed' ? outcome.bytes : 0,
        seconds,
      );
    }
    this.logger.log(
      {
        runId: claim.run.id,
        batchExportId: claim.run.batchExportId,
        attempt: claim.attemptNumber,
        status: result.status,
        ...(outcome.kind === 'completed' ? { records: outcome.records, bytes: outcome.bytes } : {}),
        ...(outcome.kind === 'failed' ? { error: outcome.message } : {}),
        seconds: Math.round(seconds * 1000) / 1000,
      },
      'batch export attempt ended',
    );
    if (result.status === 'Completed') {
      await this.notificationsRepository
        .markCompleted(claim.run.batchExportId, claim.run.dataIntervalEnd)
        .catch((err: Error) =>
          this.logger.warn(
            { runId: claim.run.id, reason: err.message },
            'last completed interval not recorded',
          ),
        );
    } else if (result.status === 'Failed' || result.status === 'FailedRetryable') {
      await this.notifications.runFailed(claim.run.id, result.autoPaused);
    }
  }

  /**
   * Never settles unless the attempt is stopped; then rejects with the stop's reason STOP_GRACE_MS later, so a
   * delivery that does not wind down in time (I/O deaf to the stop) is abandoned and the slot freed.
   */
  private abandonAfterStop(claim: ClaimedRun, signal: AbortSignal, settled: () => boolean): Promise<never> {
    return new Promise<never>((_resolve, reject) => {
      const onStop = () => {
        const timer = setTimeout(() => {
          if (settled()) return;
          this.logger.warn(
            { runId: claim.run.id, reason: (signal.reason as AttemptStopped).reason },
            'a stopped batch export attempt did not wind down in time; its slot is freed anyway',
          );
          reject(signal.reason as Error);
        }, STOP_GRACE_MS);
        timer.unref();
      };
      if (signal.aborted) onStop();
      else signal.addEventListener('abort', onStop, { once: true });
    });
  }

  private async deliver(
    claim: ClaimedRun,
    signal: AbortSignal,
    secrets: unknown[],
  ): Promise<{ records: number; bytes: number }> {
    const log = async (level: RunLogLevel, message: string) =>
      this.runs.addRunLog(claim, this.clock.now(), level, scrubSecrets(message, secrets));
    const { model: modelName, destinationType, config, teamId, incremental } = claim.batchExport;
    const model = this.models.get(modelName);
    const ctx: DeliveryContext = {
      runId: claim.run.id,
      attempt: claim.attemptNumber,
      endedRuns: (suffixes) => this.runs.endedRunSuffixes(teamId, suffixes),
      teamId,
      dataIntervalStart: claim.run.dataIntervalStart,
      dataIntervalEnd: claim.run.dataIntervalEnd,
      model,
      incremental: resolveIncremental(model, incremental),
      type: destinationType,
      config,
      egress: this.egress,
      signal,
      log,
      http: {
        maxRetries: this.config.get('BATCH_EXPORT_HTTP_MAX_RETRIES'),
        retryDelayMs: this.config.get('BATCH_EXPORT_HTTP_RETRY_DELAY_MS'),
        timeoutMs: this.config.get('BATCH_EXPORT_HTTP_TIMEOUT_MS'),
      },
      statementTimeoutMs: this.config.get('BATCH_EXPORT_STATEMENT_TIMEOUT_MS'),
      production: this.config.get('NODE_ENV') === 'production',
    };
    // A sessions or events export runs as its creator (none known: as a user in no role): the recordings the access
    // rules hide from them now, and their sessions' events, are left out.
    const visibility = model.recordingVisibility ? await this.creatorsVisibility(claim) : undefined;
    const writer = await createWriter(ctx);
    let records = 0;
    const timing = { read: 0, write: 0, finish: 0 };
    let mark = performance.now();
    const lap = (phase: keyof typeof timing) => {
      const now = performance.now();
      timing[phase] += now - mark;
      mark = now;
    };
    try {
      await writer.open();
      if (writer.copyStream) {
        // Rows that need no conversion (PostgreSQL to PostgreSQL) go through as COPY text.
        const source = await this.source.copyRows(model, this.sourceRange(teamId, claim, config, visibility));
        try {
          ({ records } = await writer.copyStream(source.stream));
        } finally {
          await source.close();
        }
        lap('write');
        if (signal.aborted) throw signal.reason;
        const { bytes } = await writer.finish();
        lap('finish');
        this.logTiming(claim, timing);
        return { records, bytes };
      }
      const pages = this.source.pages(
        model,
        this.sourceRange(teamId, claim, config, visibility),
        this.config.get('BATCH_EXPORT_PAGE_SIZE'),
        this.config.get('BATCH_EXPORT_PAGE_MAX_BYTES'),
      );
      mark = performance.now();
      for await (const page of pages) {
        lap('read');
        if (signal.aborted) throw signal.reason;
        await writer.write(page);
        lap('write');
        records += page.length;
      }
      lap('read');
      if (signal.aborted) throw signal.reason;
      const { bytes } = await writer.finish();
      lap('finish');
      this.logTiming(claim, timing);
      return { records, bytes };
    } finally {
      await writer.close();
    }
  }

  /**
   * What a run reads: its project, interval and transaction ids (scheduled runs, see export-cursor.ts), and
   * the retention its sessions are read with (now), the event names an events export includes or leaves out.
   */
  private sourceRange(
    teamId: number,
    claim: ClaimedRun,
    config: Record<string, unknown>,
    visibility: RecordingVisibility | undefined,
  ): SourceRange {
    const names = (value: unknown) => (Array.isArray(value) ? (value as string[]) : null);
    return {
      teamId,
      start: claim.run.dataIntervalStart,
      end: claim.run.dataIntervalEnd,
      xidFrom: claim.run.readXidFrom,
      xidTo: claim.run.readXidTo,
      lateBefore: claim.run.readLateBefore,
      now: this.clock.now(),
      defaultRetentionDays: this.config.get('RECORDING_RETENTION_DAYS'),
      includeEvents: names(config.include_events),
      excludeEvents: names(config.exclude_events),
      visibility,
    };
  }

  /** What the creator of the run's export may watch of its project's recordings now. */
  private async creatorsVisibility(claim: ClaimedRun): Promise<RecordingVisibility> {
    const { organizationId, id, teamId } = claim.batchExport;
    const batchExport = await this.exports.findInOrganization(organizationId, id);
    return this.recordingVisibility.visibilityFor(teamId, batchExport?.createdById ?? null);
  }

  private logTiming(claim: ClaimedRun, timing: { read: number; write: number; finish: number }): void {
    this.logger.debug(
      {
        runId: claim.run.id,
        readSeconds: timing.read / 1000,
        writeSeconds: timing.write / 1000,
        finishSeconds: timing.finish / 1000,
      },
      'batch export attempt timing',
    );
  }
}
