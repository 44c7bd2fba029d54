import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RepositoryBase } from '../../database/repository-base.js';
import type { DestinationType } from '../destinations.js';

/** A run that ended failed, with its export: what its notifications say. */
export interface FailedRun {
  id: string;
  status: string;
  latestError: string | null;
  dataIntervalStart: Date;
  dataIntervalEnd: Date;
  backfillId: string | null;
  batchExportId: string;
  name: string;
  model: string;
  organizationId: string;
  teamId: number;
  destinationType: DestinationType;
  paused: boolean;
  webhookUrl: string | null;
}

/** How far behind the active exports are (the lag metric), read from the database at a scrape. */
export interface ExportLag {
  /** Per destination type: the active exports and the largest lag among them. */
  byType: { destinationType: string; exports: number; maxSeconds: number }[];
  /** The exports furthest behind, at most the cap asked for, furthest first. */
  worst: { batchExportId: string; destinationType: string; seconds: number }[];
}

/**
 * The database side of the notifications of failed runs (e-mail limit, webhook target) and of the lag metric.
 * Every statement stands alone (no transaction), so any replica may run them at once.
 */
@Injectable()
export class NotificationsRepository extends RepositoryBase {
  constructor(dataSource: DataSource) {
    super(dataSource);
  }

  /** The run with its export; null when either is gone. */
  async failedRun(runId: string): Promise<FailedRun | null> {
    const [row] = await this.query<FailedRun>(
      `SELECT r.id, r.status, r.latest_error AS "latestError", r.data_interval_start AS "dataIntervalStart",
              r.data_interval_end AS "dataIntervalEnd", r.backfill_id AS "backfillId",
              e.id AS "batchExportId", e.name, e.model, e.organization_id AS "organizationId", e.team_id AS "teamId",
              e.destination_type AS "destinationType", e.paused, e.notification_webhook_url AS "webhookUrl"
         FROM batch_export_runs r
         JOIN batch_exports e ON e.id = r.batch_export_id
        WHERE r.id = $1 AND e.deleted_at IS NULL`,
      [runId],
    );
    return row ?? null;
  }

  /**
   * Takes the export's daily failure e-mail: true (and the time recorded) when none was sent in the 24 hours
   * before `now`. One UPDATE, so two replicas failing runs of one export at once send one e-mail between them.
   * `previous` is what `release` puts back if the e-mail then cannot be sent.
   */
  async claimFailureEmail(batchExportId: string, now: Date): Promise<{ previous: Date | null } | null> {
    const { rows } = await this.modify<{ previous: Date | null }>(
      `UPDATE batch_exports e SET failure_emailed_at = $2
         FROM (SELECT id, failure_emailed_at AS previous FROM batch_exports WHERE id = $1 FOR UPDATE) p
        WHERE e.id = p.id
          AND (p.previous IS NULL OR p.previous <= $2::timestamptz - interval '1 day' OR p.previous > $2::timestamptz)
        RETURNING p.previous`,
      [batchExportId, now],
    );
    return rows[0] ?? null;
  }

  /** Gives back a claimed failure e-mail that could not be sent (unless another claim followed). */
  async releaseFailureEmail(batchExportId: string, claimedAt: Date, previous: Date | null): Promise<void> {
    await this.query(
      'UPDATE batch_exports SET failure_emailed_at = $3 WHERE id = $1 AND failure_emailed_at = $2',
      [batchExportId, claimedAt, previous],
    );
  }

  /** Records an e-mail sent about the export (an auto-pause), so failures right after it send none that day. */
  async markEmailed(batchExportId: string, now: Date): Promise<void> {
    await this.query('UPDATE batch_exports SET failure_emailed_at = $2 WHERE id = $1', [batchExportId, now]);
  }

  /** Where the export's webhook goes now, with its secret; null when it has none (or is deleted). */
  async webhookTarget(batchExportId: string): Promise<{ url: string; secret: string } | null> {
    const [row] = await this.query<{ url: string | null; secret: string | null }>(
      `SELECT notification_webhook_url AS url, notification_webhook_secret AS secret FROM batch_exports
        WHERE id = $1 AND deleted_at IS NULL`,
      [batchExportId],
    );
    return row?.url && row.secret ? { url: row.url, secret: row.secret } : null;
  }

  /** Records that a run completed the interval ending at `end` (kept when an older interval completes later). */
  async markCompleted(batchExportId: string, end: Date): Promise<void> {
    await this.query(
      `UPDATE batch_exports SET last_completed_interval_end = greatest(last_completed_interval_end, $2::timestamptz)
        WHERE id = $1 AND last_completed_interval_end IS DISTINCT FROM greatest(last_completed_interval_end, $2::timestamptz)`,
      [batchExportId, end],
    );
  }

  /**
   * The lag of every active export (not deleted, not paused) at `now`: seconds from the end of the newest interval
   * it completed (none yet: its start_at, else its creation) to now, or to its end_at when that has passed (an
   * export done with its range is not behind); never negative. One pass over the exports table.
   */
  async lag(now: Date, limit: number): Promise<ExportLag> {
    const rows = await this.query<{
      kind: 'type' | 'export';
      destination_type: string;
      id: string | null;
      exports: number;
      seconds: number;
    }>(
      `WITH lag AS (
         SELECT e.id::text AS id, e.destination_type,
                greatest(0, extract(epoch FROM least($1::timestamptz, coalesce(e.end_at, $1::timestamptz))
                  - coalesce(e.last_completed_interval_end, e.start_at, e.created_at)))::float8 AS seconds
           FROM batch_exports e
          WHERE e.deleted_at IS NULL AND NOT e.paused)
       SELECT 'type' AS kind, destination_type, NULL AS id, count(*)::int AS exports, max(seconds) AS seconds
         FROM lag GROUP BY destination_type
       UNION ALL
       (SELECT 'export', destination_type, id, 1, seconds FROM lag ORDER BY seconds DESC, id LIMIT $2)`,
      [now, limit],
    );
    return {
      byType: rows
        .filter((r) => r.kind === 'type')
        .map((r) => ({ destinationType: r.destination_type, exports: r.exports, maxSeconds: r.seconds })),
      worst: rows
        .filter((r) => r.kind === 'export')
        .map((r) => ({ batchExportId: r.id!, destinationType: r.destination_type, seconds: r.seconds })),
    };
  }
}
