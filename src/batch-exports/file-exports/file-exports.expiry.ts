import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { IntervalTask } from '../../common/tasks/interval-task.js';
import { FileExportStore } from './file-export-store.js';
import { FileExportsRepository } from './file-exports.repository.js';

const BATCH = 500;

/**
 * Every FILE_EXPORT_EXPIRY_INTERVAL_SECONDS: the file exports past `expires_after` lose their objects, then their
 * rows (a batch at a time). An object is removed before its row, so a failure leaves the row for the next tick.
 */
@Injectable()
export class FileExportsExpiry extends IntervalTask {
  static readonly INTERVAL_NAME = 'file-exports-expiry';
  private readonly logger = new Logger(FileExportsExpiry.name);

  constructor(
    private readonly exports: FileExportsRepository,
    private readonly store: FileExportStore,
    private readonly clock: Clock,
  ) {
    super();
  }

  protected async run(): Promise<void> {
    try {
      await this.expire(this.clock.now());
    } catch (err) {
      this.logger.warn(
        { reason: (err as Error).message },
        'file export expiry failed; the next tick retries',
      );
    }
  }

  /** Removes every export expired at `now`; returns how many. */
  async expire(now: Date): Promise<number> {
    let removed = 0;
    while (!this.stopped) {
      const expired = await this.exports.expired(now, BATCH);
      if (!expired.length) break;
      const keys = expired.flatMap((e) => (e.object_key ? [e.object_key] : []));
      if (keys.length && this.store.configured) await this.store.remove(keys);
      await this.exports.delete(expired.map((e) => e.id));
      removed += expired.length;
      if (expired.length < BATCH) break;
    }
    if (removed) this.logger.log({ removed }, 'expired file exports removed');
    return removed;
  }
}
