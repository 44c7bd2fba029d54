import { Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PgBoss, type Db as IDatabase, type Job } from 'pg-boss';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_SCHEMA, poolExecutor } from '../../database/job-queue.js';

/** The queue of file exports: one job per export, the job's id is the export's id. */
export const FILE_EXPORTS_QUEUE = 'file-exports';

/** How long a running job may go untouched before it is taken as lost. */
export const HEARTBEAT_SECONDS = 30;

export interface FileExportJobData {
  file_export_id: string;
}

/**
 * The job queue of file exports: pg-boss on the service's PostgreSQL, in the schema of the batch export runs'
 * queue (`pgboss`). A worker that dies or shuts down mid-file stops touching its job; the queue's supervision (in
 * the processes running batch export workers) fails it after HEARTBEAT_SECONDS and it is retried once (the file is
 * written again from the start, under the same key).
 */
@Injectable()
export class FileExportQueue implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(FileExportQueue.name);
  private readonly boss: PgBoss;
  private started = false;

  constructor(dataSource: DataSource) {
    this.boss = new PgBoss({
      db: poolExecutor(dataSource),
      schema: JOB_QUEUE_SCHEMA,
      migrate: false,
      // The batch export runs' queue supervises the schema (expiry, upkeep) in the worker processes.
      supervise: false,
      schedule: false,
      instanceName: 'file-exports',
    });
    this.boss.on('error', (err: Error) =>
      this.logger.warn({ reason: err.message }, 'file export queue maintenance failed; it is retried'),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.boss.start();
    this.started = true;
    const options = {
      retryLimit: 1,
      retryDelay: 5,
      // A worker touches its job every HEARTBEAT_SECONDS / 3: a job not touched for HEARTBEAT_SECONDS (its worker
      // died or shut down) is failed by the queue's supervision and retried once.
      heartbeatSeconds: HEARTBEAT_SECONDS,
      expireInSeconds: 6 * 3600,
      deleteAfterSeconds: 7 * 24 * 3600,
    };
    await this.boss.createQueue(FILE_EXPORTS_QUEUE, options);
    // An existing queue keeps its options: apply this version's.
    await this.boss.updateQueue(FILE_EXPORTS_QUEUE, options);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.boss.stop({ graceful: false, close: false }).catch(() => undefined);
  }

  /** Queues the export's job in `db`'s transaction: it commits (and can be taken) with the export's row. */
  async send(id: string, db: IDatabase): Promise<void> {
    await this.boss.send(FILE_EXPORTS_QUEUE, { file_export_id: id } satisfies FileExportJobData, { id, db });
  }

  /** A queued export's job is cancelled (one a worker holds is stopped by the worker's cancel check). */
  async cancel(id: string): Promise<void> {
    await this.boss.cancel(FILE_EXPORTS_QUEUE, id).catch(() => undefined);
  }

  async fetch(): Promise<Job<FileExportJobData> | null> {
    const [job] = await this.boss.fetch<FileExportJobData>(FILE_EXPORTS_QUEUE, { batchSize: 1 });
    return job ?? null;
  }

  /** The worker holding the job is alive. */
  async touch(id: string): Promise<void> {
    await this.boss.touch(FILE_EXPORTS_QUEUE, id);
  }

  async complete(id: string): Promise<void> {
    await this.boss.complete(FILE_EXPORTS_QUEUE, id);
  }
}
