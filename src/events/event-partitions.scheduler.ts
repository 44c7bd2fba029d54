import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { isDatabaseUnavailable } from '../common/errors/database-errors.js';
import { Clock } from '../common/time/clock.js';
import { IntervalTask } from '../common/tasks/interval-task.js';
import { AppConfig } from '../config/config.js';
import { columnarCutoff, dayOf, eventsCutoff } from './event-partitions.js';
import { EventPartitionsRepository } from './event-partitions.repository.js';
import { EventsIngestionService } from './events-ingestion.service.js';
import { EventsRepository } from './events.repository.js';
import { EVENTS_STORE, type EventsStore } from '../stores/events-store.js';

/** Rows one DELETE of the per-project trim removes. */
const DELETE_BATCH = 5000;

/**
 * The day partitions of `events`, every EVENTS_PURGE_INTERVAL_SECONDS on every replica (and once at boot): creates
 * today's and the next EVENTS_PARTITIONS_AHEAD_DAYS days' partitions (idempotent, serialised by an advisory lock),
 * drops the partitions of days every project's retention has passed (the cost is one DROP per day, whatever the
 * number of events), and deletes rows only for projects kept shorter than the longest retention. On Citus the
 * partitions are created and dropped by Citus's time-partition functions, and with EVENTS_COLUMNAR_AFTER_DAYS old
 * ones are converted to `columnar` (docs/citus.md, "Day partitions on Citus").
 */
@Injectable()
export class EventPartitionsScheduler extends IntervalTask implements OnApplicationBootstrap {
  static readonly INTERVAL_NAME = 'event-partitions';
  private readonly logger = new Logger(EventPartitionsScheduler.name);

  constructor(
    @Inject(EVENTS_STORE) private readonly store: EventsStore,
    private readonly events: EventsRepository,
    private readonly partitions: EventPartitionsRepository,
    private readonly ingestion: EventsIngestionService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /**
   * Refuses to start when EVENTS_COLUMNAR_AFTER_DAYS is set and the database has no `columnar` access method:
   * it is Citus's (the citus_columnar extension), which plain PostgreSQL has not.
   */
  async onApplicationBootstrap(): Promise<void> {
    const days = this.config.get('EVENTS_COLUMNAR_AFTER_DAYS');
    if (!days) return;
    const { citus, columnar } = await this.partitions.engine();
    if (citus && columnar) return;
    throw new Error(
      `EVENTS_COLUMNAR_AFTER_DAYS is ${days}, but ` +
        (citus
          ? "this Citus database has no `columnar` access method: run `CREATE EXTENSION citus_columnar` on the coordinator's database (Citus creates it on the workers)"
          : "the database is not a Citus coordinator (no citus extension): `columnar` is Citus's access method, which plain PostgreSQL has not") +
        '; or set EVENTS_COLUMNAR_AFTER_DAYS to 0 (docs/citus.md, "Columnar event partitions").',
    );
  }

  protected async run(): Promise<void> {
    try {
      await this.maintain();
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.logger.warn(
          { reason: (err as Error).message },
          'database unavailable: event partition task skipped',
        );
        return;
      }
      this.logger.error({ err }, 'event partition task failed; the next one retries');
    }
  }

  /** One pass: partitions ahead, expired partitions dropped, old ones made columnar, shorter retentions trimmed. */
  async maintain(): Promise<{ created: number; dropped: number; deleted: number; columnar: number }> {
    const nowMs = this.clock.now().getTime();
    const today = dayOf(nowMs);
    const existing = new Set(await this.store.preparedDays());
    const ahead: number[] = [];
    for (let d = today; d <= today + this.config.get('EVENTS_PARTITIONS_AHEAD_DAYS'); d++) {
      if (!existing.has(d)) ahead.push(d);
    }
    await this.ingestion.ensureDays(ahead);
    const { maxDays, shorter } = await this.events.retentions(this.config.get('EVENTS_RETENTION_DAYS'));
    const firstKept = dayOf(eventsCutoff(nowMs, maxDays).getTime());
    for (const day of existing) if (day < firstKept) this.ingestion.forgetDay(day);
    const dropped = this.stopped ? 0 : await this.store.dropDaysBefore(firstKept);
    let deleted = 0;
    for (const { teamId, days } of shorter) {
      const cutoff = eventsCutoff(nowMs, days);
      for (;;) {
        if (this.stopped) break;
        const n = await this.store.deleteOlderThan(teamId, cutoff, DELETE_BATCH);
        deleted += n;
        if (n < DELETE_BATCH) break;
      }
    }
    // Last: a conversion that fails (a lock not had in time) leaves the rest of the pass done.
    const columnarDays = this.config.get('EVENTS_COLUMNAR_AFTER_DAYS');
    const columnar =
      columnarDays && !this.stopped
        ? await this.partitions.convertToColumnar(columnarCutoff(nowMs, columnarDays))
        : 0;
    if (ahead.length || dropped || deleted || columnar) {
      this.logger.log({ created: ahead.length, dropped, deleted, columnar }, 'event partitions maintained');
    }
    return { created: ahead.length, dropped, deleted, columnar };
  }
}
