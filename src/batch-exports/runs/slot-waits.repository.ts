import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { transactionExecutor } from '../../database/job-queue.js';
import { RepositoryBase } from '../../database/repository-base.js';
import { BatchExportsRepository } from '../batch-exports.repository.js';
import { RunQueue, type FairnessCaps } from './run-queue.js';

/** Runs waiting for a worker slot longer than BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS, written to their logs once. */
@Injectable()
export class SlotWaitsRepository extends RepositoryBase {
  constructor(
    dataSource: DataSource,
    private readonly queue: RunQueue,
    private readonly exports: BatchExportsRepository,
  ) {
    super(dataSource);
  }

  /**
   * Writes a WARNING line in the log of each run whose job has waited longer than `seconds` for a worker slot
   * (at most 100 per call, once per run), naming the runs executing with its organization, project and user
   * against their caps. One process at a time (a transaction's try-lock; another process skips the check). The
   * runs logged, for the service's log.
   */
  async logLongWaits(
    now: Date,
    seconds: number,
    caps: FairnessCaps,
  ): Promise<{ runId: string; batchExportId: string; waited: number; message: string }[]> {
    return this.transaction(async () => {
      const [{ locked }] = await this.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_xact_lock(hashtextextended('batch-export-slot-waits', 0)) AS locked`,
      );
      if (!locked) return [];
      const db = await transactionExecutor(this.manager);
      const waiting = await this.queue.waitingLongerThan(db, seconds, 100);
      if (!waiting.length) return [];
      const logged = await this.query<{ run_id: string }>(
        `SELECT DISTINCT run_id::text AS run_id FROM batch_export_logs
          WHERE run_id = ANY($1::uuid[]) AND level = 'WARNING' AND message LIKE 'Waiting for a worker slot%'`,
        [waiting.map((w) => w.runId)],
      );
      const done = new Set(logged.map((l) => l.run_id));
      const cap = (n: number, max: number) => `${n} of ${max > 0 ? max : 'no cap'}`;
      const fresh = waiting
        .filter((w) => !done.has(w.runId))
        .map((w) => ({
          runId: w.runId,
          batchExportId: w.batchExportId,
          waited: w.waited,
          message:
            `Waiting for a worker slot for ${w.waited} s. Runs executing now: its organization's ` +
            `${cap(w.organization, caps.organization)}, its project's ${cap(w.project, caps.project)}, ` +
            `its user's ${cap(w.user, caps.user)}; below every cap, all workers are busy.`,
        }));
      await this.exports.addLogs(
        fresh.map((f) => ({
          batchExportId: f.batchExportId,
          runId: f.runId,
          timestamp: now,
          level: 'WARNING' as const,
          message: f.message,
        })),
      );
      return fresh;
    });
  }
}
