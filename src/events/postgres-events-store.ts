import { Injectable } from '@nestjs/common';
import {
  type EventAppendResult,
  type EventRow,
  type EventsStore,
  type SessionEventsSql,
} from '../stores/events-store.js';
import { POSTGRES_EXPORT_CURSOR } from '../stores/export-cursor.js';
import type { ExportStatement, SourceRange } from '../stores/export-model.js';
import { eventsExportStatement } from './events-export.js';
import { POSTGRES_SESSION_EVENTS } from './events-session-filters.js';
import { EventPartitionsRepository } from './event-partitions.repository.js';
import { EventsRepository } from './events.repository.js';

const INSERTED: EventAppendResult = Object.freeze({ status: 'inserted' });

/**
 * The PostgreSQL events store (the seam: src/stores/events-store.ts): the day-partitioned `events` table
 * (EventsRepository), one partition per prepared day.
 */
@Injectable()
export class PostgresEventsStore implements EventsStore {
  readonly name = 'postgresql';
  readonly cursor = POSTGRES_EXPORT_CURSOR;
  readonly sessions: SessionEventsSql = POSTGRES_SESSION_EVENTS;

  constructor(
    private readonly events: EventsRepository,
    private readonly partitions: EventPartitionsRepository,
  ) {}

  preparedDays(): Promise<number[]> {
    return this.partitions.partitionDays();
  }

  async prepareDays(days: readonly number[]): Promise<void> {
    for (const day of [...new Set(days)].sort((a, b) => a - b)) await this.partitions.createPartition(day);
  }

  dropDaysBefore(day: number): Promise<number> {
    return this.partitions.dropPartitionsBefore(day);
  }

  /**
   * The insert returns the (uuid, timestamp) of each row it stored: the uniqueness is per day partition, so that
   * names the row given (the same uuid on two days is two events). Of rows given twice with the same uuid and
   * timestamp, the first is the one stored.
   */
  async append(
    teamId: number,
    rows: readonly EventRow[],
    markIngested = false,
  ): Promise<EventAppendResult[]> {
    const returned = await this.events.insertBatch(teamId, rows, markIngested);
    // As many rows stored as given (the usual batch): each was stored (a row is stored once at most), so none is
    // looked up.
    if (returned.length === rows.length) return rows.map(() => INSERTED);
    const stored = new Set<string>();
    for (const [uuid, ms] of returned) stored.add(`${uuid}|${ms}`);
    return rows.map((row) => {
      const key = `${row.uuid.toLowerCase()}|${row.timestamp.getTime()}`;
      return stored.delete(key) ? INSERTED : { status: 'duplicate' };
    });
  }

  exportScan(range: SourceRange): ExportStatement {
    return eventsExportStatement(range);
  }

  // The deletes leave out the columnar partitions (Citus, EVENTS_COLUMNAR_AFTER_DAYS), which take no DELETE: their
  // events go with their partition (docs/citus.md, "Columnar event partitions").

  async deleteOlderThan(teamId: number, before: Date, limit: number): Promise<number> {
    return this.events.deleteOlderThan(teamId, before, limit, await this.partitions.columnarUntil());
  }

  async deleteOfProject(teamId: number, limit: number): Promise<number> {
    return this.events.deleteOfProject(teamId, limit, await this.partitions.columnarUntil());
  }

  async deleteOfPerson(teamId: number, personUuid: string, limit: number): Promise<number> {
    return this.events.deleteOfPerson(teamId, personUuid, limit, await this.partitions.columnarUntil());
  }
}
