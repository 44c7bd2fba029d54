import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../common/errors/database-errors.js';
import { IntervalTask } from '../common/tasks/interval-task.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { ActivityLogRepository } from './activity-log.repository.js';

/** Entries one prune transaction deletes at most. */
const PRUNE_BATCH = 5000;

/**
 * Deletes activity log entries older than ACTIVITY_LOG_RETENTION_DAYS every ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS:
 * the only deletion the table's trigger lets through (docs/security.md). Every replica may run it: a row is
 * deleted once, and a failed prune is retried by the next tick.
 */
@Injectable()
export class ActivityLogPruneTask extends IntervalTask {
  static readonly INTERVAL_NAME = 'activity-log-prune';
  private readonly logger = new Logger(ActivityLogPruneTask.name);

  constructor(
    private readonly logs: ActivityLogRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    super();
  }

  /** Deletes every expired entry, in batches; returns how many. */
  async prune(): Promise<number> {
    const days = this.config.get('ACTIVITY_LOG_RETENTION_DAYS');
    const cutoff = new Date(this.clock.now().getTime() - days * 24 * 3600_000);
    let total = 0;
    for (;;) {
      const deleted = await this.logs.pruneBatch(cutoff, PRUNE_BATCH);
      total += deleted;
      if (deleted < PRUNE_BATCH || this.stopped) return total;
    }
  }

  protected async run(): Promise<void> {
    try {
      const deleted = await this.prune();
      if (deleted) this.logger.log({ deleted }, `pruned ${deleted} expired activity log entries`);
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.logger.warn(
          { reason: (err as Error).message },
          'database unavailable: activity log prune skipped',
        );
        return;
      }
      this.logger.error({ err }, 'activity log prune failed; the next one retries');
    }
  }
}
