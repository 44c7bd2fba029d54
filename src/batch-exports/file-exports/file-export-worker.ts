import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/config.js';
import { RecordingVisibilityService } from '../../recording-access-rules/recording-visibility.service.js';
import { ExportError } from '../runs/export-errors.js';
import { ExportModels } from '../runs/export-models.js';
import { ExportSourceRepository } from '../runs/export-source.repository.js';
import type { FileExportEntity } from './file-export.entity.js';
import { FileExportQueue, HEARTBEAT_SECONDS } from './file-export-queue.js';
import { FileExportStore } from './file-export-store.js';
import { objectKeyOf, writeExportFile, type FileSource } from './file-export-writer.js';
import { FileExportsRepository } from './file-exports.repository.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest wait between two attempts at a file when the object store fails transiently. */
const MAX_RETRY_DELAY_MS = 60_000;

/** Thrown by the cancel check between pages. */
class Cancelled extends Error {}

/**
 * The file export worker of this process (with the batch export workers: BATCH_EXPORT_WORKERS): one loop that
 * claims the next queued export, writes its file to the object store and records the outcome. Between pages it
 * reads the export's status: a cancelled export stops there, its upload aborted (S3 drops the parts) and nothing
 * stored; one cancelled just as its file was completed has the object removed.
 */
@Injectable()
export class FileExportWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(FileExportWorker.name);
  private loop: Promise<void> | null = null;
  private stopping = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly queue: FileExportQueue,
    private readonly exports: FileExportsRepository,
    private readonly store: FileExportStore,
    private readonly source: ExportSourceRepository,
    private readonly models: ExportModels,
    private readonly visibility: RecordingVisibilityService,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.get('BATCH_EXPORT_WORKERS') || !this.store.configured) return;
    this.loop = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const idle = this.config.get('BATCH_EXPORT_POLL_INTERVAL_MS');
    while (!this.stopping) {
      try {
        const job = await this.queue.fetch();
        if (!job) {
          await sleep(idle);
          continue;
        }
        await this.process(job.data.file_export_id);
        await this.queue.complete(job.id);
      } catch (err) {
        if (this.stopping) return;
        this.logger.warn({ reason: (err as Error).message }, 'file export worker: a claim failed; retrying');
        await sleep(idle);
      }
    }
  }

  /** Writes one export's file and records the outcome (Complete, Failed, or nothing once cancelled). */
  async process(id: string): Promise<void> {
    if (!(await this.exports.start(id))) return;
    const entity = (await this.exports.findById(id))!;
    const prefix = this.store.exportPrefix(entity.teamId, entity.id);
    const key = objectKeyOf(prefix, entity);
    const heartbeat = setInterval(
      () => void this.queue.touch(id).catch(() => undefined),
      (HEARTBEAT_SECONDS * 1000) / 3,
    );
    const stillWanted = async () => {
      if (this.stopping) throw new Error('the worker stopped');
      if ((await this.exports.status(id)) !== 'Running') throw new Cancelled();
    };
    try {
      const result = await this.writeWithRetries(id, async () =>
        writeExportFile(
          entity,
          await this.fileSource(entity),
          await this.store.writerStore(this.abort.signal),
          prefix,
          this.abort.signal,
          stillWanted,
        ),
      );
      // Every complete export has its object (a range without rows: an empty file).
      const done = { ...result, objectKey: key, at: this.clock.now() };
      if (!(await this.exports.complete(id, done))) await this.store.remove([key]);
      this.logger.log({ id, rows: result.rows, bytes: result.bytes }, 'file export written');
    } catch (err) {
      if (err instanceof Cancelled) {
        this.logger.log({ id }, 'file export cancelled; its upload was aborted');
        return;
      }
      if (this.stopping) throw err;
      this.logger.warn({ id, reason: (err as Error).message }, 'file export failed');
      await this.exports.fail(id, (err as Error).message, this.clock.now());
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * `write` (one attempt at the whole file), tried again from the start while the object store fails transiently
   * (refused, reset or timed-out connections, 5xx and 429 answers): FILE_EXPORT_STORE_ATTEMPTS attempts, waiting
   * FILE_EXPORT_STORE_RETRY_DELAY_MS before the second and twice as long before each next (at most 60 s), the
   * cancel check between. Other errors end it at once. Each attempt writes the same key, so nothing is left over.
   */
  private async writeWithRetries<T>(id: string, write: () => Promise<T>): Promise<T> {
    const attempts = this.config.get('FILE_EXPORT_STORE_ATTEMPTS');
    const delay = this.config.get('FILE_EXPORT_STORE_RETRY_DELAY_MS');
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (err instanceof Cancelled || this.stopping || !(err instanceof ExportError) || !err.retryable) {
          throw err;
        }
        if (attempt >= attempts) {
          throw new Error(
            `The object store failed ${attempts} attempt${attempts === 1 ? '' : 's'} in a row; the last: ${err.message}`,
            { cause: err },
          );
        }
        const wait = Math.min(delay * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
        this.logger.warn(
          { id, attempt, retry_in_ms: wait, reason: err.message },
          'file export: the object store failed; the file is written again',
        );
        await this.waitWanted(id, wait);
      }
    }
  }

  /** Waits `ms`, ending early (Cancelled, or the worker's stop) when the export is no longer wanted. */
  private async waitWanted(id: string, ms: number): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      if (this.stopping) throw new Error('the worker stopped');
      if ((await this.exports.status(id)) !== 'Running') throw new Cancelled();
      const left = until - Date.now();
      if (left <= 0) return;
      await sleep(Math.min(left, 1000));
    }
  }

  /**
   * Whether the file may hold recordings' data that `userId` may not watch: an export of a model the recording access
   * rules apply to (sessions, events), made by another user, for someone whom the project's rules hide recordings
   * from. The file was read with its creator's visibility.
   */
  async hiddenFrom(entity: FileExportEntity, userId: number): Promise<boolean> {
    if (userId === entity.createdById || !this.models.get(entity.model).recordingVisibility) return false;
    return (await this.visibility.visibilityFor(entity.teamId, userId)).restricted;
  }

  /** What reading the export's rows needs now (the streamed content route reads the same). */
  async fileSource(entity: FileExportEntity): Promise<FileSource> {
    const model = this.models.get(entity.model);
    return {
      source: this.source,
      model,
      visibility: model.recordingVisibility
        ? await this.visibility.visibilityFor(entity.teamId, entity.createdById)
        : undefined,
      pageSize: this.config.get('BATCH_EXPORT_PAGE_SIZE'),
      pageMaxBytes: this.config.get('BATCH_EXPORT_PAGE_MAX_BYTES'),
      retentionDays: this.config.get('RECORDING_RETENTION_DAYS'),
      now: this.clock.now(),
    };
  }
}
