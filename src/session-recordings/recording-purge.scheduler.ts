import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { isDatabaseUnavailable } from '../common/errors/database-errors.js';
import { AppConfig } from '../config/config.js';
import { RecordingRetentionService } from './recording-retention.service.js';

/**
 * Purges expired recordings every RECORDING_PURGE_INTERVAL_SECONDS (0: never, in this process). Thin, as the
 * batch export scheduler: every replica may run it (batches skip what another holds), and a failed purge is
 * simply retried by the next one.
 */
@Injectable()
export class RecordingPurgeScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  static readonly INTERVAL_NAME = 'recording-purge';
  private readonly logger = new Logger(RecordingPurgeScheduler.name);
  private inFlight: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly retention: RecordingRetentionService,
    private readonly registry: SchedulerRegistry,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const seconds = this.config.get('RECORDING_PURGE_INTERVAL_SECONDS');
    if (!seconds) return;
    const handle = setInterval(() => void this.tick(), seconds * 1000);
    this.registry.addInterval(RecordingPurgeScheduler.INTERVAL_NAME, handle);
  }

  /** On shutdown: no new purge, and the batch in flight finishes before the pool closes. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.registry.doesExist('interval', RecordingPurgeScheduler.INTERVAL_NAME)) {
      this.registry.deleteInterval(RecordingPurgeScheduler.INTERVAL_NAME);
    }
    await this.inFlight;
  }

  /** One purge. Skipped while the previous one still runs; never throws. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.inFlight ??= this.run().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async run(): Promise<void> {
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
