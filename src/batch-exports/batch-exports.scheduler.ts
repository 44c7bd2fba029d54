import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../common/errors/database-errors.js';
import { Clock } from '../common/time/clock.js';
import { IntervalTask } from '../common/tasks/interval-task.js';
import { AppConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { BatchExportsService } from './batch-exports.service.js';

/**
 * The batch export scheduler: every SCHEDULER_TICK_SECONDS (when SCHEDULER_ENABLED) it calls
 * `createDueRuns(now)`. Thin on purpose: the rules and the exactly-once guarantee live in that one statement,
 * so every replica may run this and a failed tick is simply retried by the next one.
 */
@Injectable()
export class BatchExportsScheduler extends IntervalTask {
  static readonly INTERVAL_NAME = 'batch-exports-scheduler';
  private readonly logger = new Logger(BatchExportsScheduler.name);

  constructor(
    private readonly batchExports: BatchExportsService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly metrics: MetricsService,
  ) {
    super();
  }

  /** Off with SCHEDULER_ENABLED=false (its interval is SCHEDULER_TICK_SECONDS, declared in the manifest). */
  override enabled(): boolean {
    return this.config.get('SCHEDULER_ENABLED');
  }

  /** One tick at the clock's now. */
  protected async run(): Promise<void> {
    const now = this.clock.now();
    try {
      const { created, exports } = await this.metrics.recordSchedulerTick(() =>
        this.batchExports.createDueRuns(now),
      );
      if (created) {
        this.logger.log({ created, exports, now: now.toISOString() }, 'batch export runs created');
      } else {
        this.logger.debug({ now: now.toISOString() }, 'batch export scheduler tick: no run due');
      }
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // An outage is not a bug: one line per skipped tick, no stack; the next tick catches up.
        this.logger.warn(
          { now: now.toISOString(), reason: (err as Error).message },
          'database unavailable: batch export scheduler tick skipped',
        );
        return;
      }
      this.logger.error(
        { err, now: now.toISOString() },
        'batch export scheduler tick failed; the next tick retries',
      );
    }
  }
}
