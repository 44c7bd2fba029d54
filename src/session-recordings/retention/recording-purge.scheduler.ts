import { Injectable, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-errors.js';
import { IntervalTask } from '../../common/tasks/interval-task.js';
import { RecordingRetentionService } from './recording-retention.service.js';

/**
 * Purges expired recordings every RECORDING_PURGE_INTERVAL_SECONDS (0: never, in this process). Thin, as the
 * batch export scheduler: every replica may run it (batches skip what another holds), and a failed purge is
 * simply retried by the next one.
 */
@Injectable()
export class RecordingPurgeScheduler extends IntervalTask {
  static readonly INTERVAL_NAME = 'recording-purge';
  private readonly logger = new Logger(RecordingPurgeScheduler.name);

  constructor(private readonly retention: RecordingRetentionService) {
    super();
  }

  /** One purge (a tick). */
  protected async run(): Promise<void> {
    try {
      const result = await this.retention.purgeExpired(() => !this.stopped);
      if (result.recordings) {
        this.logger.log(result, `purged ${result.recordings} expired recordings`);
      } else {
        this.logger.debug('recording purge: nothing expired');
      }
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.logger.warn({ reason: (err as Error).message }, 'database unavailable: recording purge skipped');
        return;
      }
      this.logger.error({ err }, 'recording purge failed; the next one retries');
    }
  }
}
