import { Injectable, Logger } from '@nestjs/common';
import { IntervalTask } from '../common/tasks/interval-task.js';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from '../config/config.js';
import { ScimRepository } from './scim.repository.js';

/** Rows one statement of the purge deletes, so no statement holds many locks or runs long. */
const BATCH = 5000;

/** The `scim-log-purge` task: deletes SCIM request log entries older than SCIM_LOG_RETENTION_DAYS, in batches. */
@Injectable()
export class ScimLogPurgeTask extends IntervalTask {
  static readonly INTERVAL_NAME = 'scim-log-purge';
  private readonly logger = new Logger(ScimLogPurgeTask.name);

  constructor(
    private readonly scim: ScimRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /** One pass; how many entries it deleted. */
  async purge(): Promise<number> {
    const before = new Date(
      this.clock.now().getTime() - this.config.get('SCIM_LOG_RETENTION_DAYS') * 86_400_000,
    );
    let total = 0;
    for (;;) {
      const deleted = await this.scim.purgeLogs(before, BATCH);
      total += deleted;
      if (deleted < BATCH || this.stopped) return total;
    }
  }

  protected async run(): Promise<void> {
    try {
      const deleted = await this.purge();
      if (deleted) this.logger.log({ deleted }, 'SCIM request log: expired entries deleted');
    } catch (err) {
      this.logger.error({ err }, 'SCIM request log purge failed; the next tick retries');
    }
  }
}
