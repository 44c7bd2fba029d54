import { Injectable } from '@nestjs/common';
import { type ExportCursor, POSTGRES_EXPORT_CURSOR } from '../stores/export-cursor.js';
import type { ExportStatement, SourceRange } from '../stores/export-model.js';
import type { EventRow } from './event-rows.js';
import { eventsExportStatement } from './events-export.js';
import { EventsRepository } from './events.repository.js';

/** What appending one batch did. */
export interface AppendOutcome {
  /** Rows stored. */
  stored: number;
  /** Rows skipped: their (project, uuid) was already stored. */
  duplicates: number;
}

/**
 * The seam of the events store (docs/data-access.md, "Stores"): everything the application does with stored
 * events goes through it, so a second implementation (a distributed engine) replaces PostgreSQL's without
 * touching request paths. Each implementation passes test/stores/events-store.conformance.ts.
 */
export interface EventsStore {
  /** Its name, in logs and in the conformance suite. */
  readonly name: string;
  /** The export cursor batch exports read its events by (export-cursor.ts). */
  readonly cursor: ExportCursor;
  /** Makes the store ready for events of these days (PostgreSQL: their partitions). */
  prepareDays(days: readonly number[]): Promise<void>;
  /**
   * Appends events of one project, in the caller's transaction; an event whose (project, uuid) is stored
   * already is skipped. With `markIngested`, the project's `ingested_event` is set once a row is stored.
   */
  append(teamId: number, rows: readonly EventRow[], markIngested?: boolean): Promise<AppendOutcome>;
  /** The statement a batch export run reads the project's events by (by its cursor: `SourceRange`). */
  exportScan(range: SourceRange): ExportStatement;
  /** Deletes at most `limit` events of a (deleted) project; returns how many. */
  deleteOfProject(teamId: number, limit: number): Promise<number>;
}

/** The injection token of the events store (EventsModule binds it to PostgresEventsStore). */
export const EVENTS_STORE = Symbol('EventsStore');

/** The PostgreSQL events store: the day-partitioned `events` table (EventsRepository). */
@Injectable()
export class PostgresEventsStore implements EventsStore {
  readonly name = 'postgresql';
  readonly cursor = POSTGRES_EXPORT_CURSOR;

  constructor(private readonly events: EventsRepository) {}

  async prepareDays(days: readonly number[]): Promise<void> {
    for (const day of [...new Set(days)].sort((a, b) => a - b)) await this.events.createPartition(day);
  }

  async append(teamId: number, rows: readonly EventRow[], markIngested = false): Promise<AppendOutcome> {
    const stored = await this.events.insertBatch(teamId, rows, markIngested);
    return { stored, duplicates: rows.length - stored };
  }

  exportScan(range: SourceRange): ExportStatement {
    return eventsExportStatement(range);
  }

  deleteOfProject(teamId: number, limit: number): Promise<number> {
    return this.events.deleteOfProject(teamId, limit);
  }
}
