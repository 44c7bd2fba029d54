import { Injectable } from '@nestjs/common';
import type { PageParams } from '../../common/pagination/page.js';
import type { Db as IDatabase } from 'pg-boss';
import { GenerateSql } from '../../database/generate-sql.js';
import { transactionExecutor } from '../../database/job-queue.js';
import { RepositoryBase } from '../../database/repository-base.js';
import { FileExportEntity } from './file-export.entity.js';

const EXPORT = '00000000-0000-4000-8000-000000000003';
const AT = new Date('2026-11-21T10:00:00.000Z');
const NEW_EXPORT = (f: { projectId: number; userId: number }): Omit<FileExportEntity, 'id'> => ({
  teamId: f.projectId,
  createdById: f.userId,
  model: 'events',
  format: 'Parquet',
  startAt: new Date('2026-11-20T00:00:00.000Z'),
  endAt: AT,
  status: 'Pending',
  rowCount: null,
  bytes: null,
  objectKey: null,
  error: null,
  createdAt: AT,
  finishedAt: null,
  expiresAt: new Date('2026-11-22T10:00:00.000Z'),
});

/** The statements over `file_exports`: the service and the worker never build SQL. */
@Injectable()
export class FileExportsRepository extends RepositoryBase {
  private get repo() {
    return this.repository(FileExportEntity);
  }

  @GenerateSql({ params: (f) => [NEW_EXPORT(f)] })
  insert(entity: Omit<FileExportEntity, 'id'>): Promise<FileExportEntity> {
    return this.repo.save(this.repo.create(entity));
  }

  /**
   * Inserts the export unless its creator already has `max` exports Pending or Running in its project (null then),
   * and `enqueue`s its job in the same transaction (`db`), so the job is never taken before the row exists and
   * neither is stored without the other. The count and the insert hold a lock of that user and project, so
   * concurrent requests cannot pass the cap together.
   */
  @GenerateSql({ params: (f) => [NEW_EXPORT(f), 10, async () => undefined] })
  insertWithinQueueCap(
    entity: Omit<FileExportEntity, 'id'>,
    max: number,
    enqueue: (id: string, db: IDatabase) => Promise<void>,
  ): Promise<FileExportEntity | null> {
    return this.transaction(async () => {
      await this.query(
        `SELECT pg_advisory_xact_lock(hashtextextended('file-exports-queue:' || $1 || ':' || coalesce($2::text, ''), 0))`,
        [entity.teamId, entity.createdById],
      );
      // A statement of its own, after the lock: its snapshot sees what the holder before committed.
      const [{ queued }] = await this.query<{ queued: number }>(
        `SELECT count(*)::int AS queued FROM file_exports
          WHERE team_id = $1 AND created_by_id IS NOT DISTINCT FROM $2 AND status IN ('Pending', 'Running')`,
        [entity.teamId, entity.createdById],
      );
      if (queued >= max) return null;
      const saved = await this.repo.save(this.repo.create(entity));
      await enqueue(saved.id, await transactionExecutor(this.manager));
      return saved;
    });
  }

  /** The export of the project, or null (another project's is not found). */
  @GenerateSql({ params: (f) => [f.projectId, EXPORT] })
  findInProject(teamId: number, id: string): Promise<FileExportEntity | null> {
    return this.repo.findOneBy({ teamId, id });
  }

  @GenerateSql({ params: [EXPORT] })
  findById(id: string): Promise<FileExportEntity | null> {
    return this.repo.findOneBy({ id });
  }

  /** The project's exports, newest first. */
  @GenerateSql({ params: (f) => [f.projectId, { limit: 100, offset: 0 }] })
  async list(teamId: number, page: PageParams): Promise<{ items: FileExportEntity[]; total: number }> {
    const [items, total] = await this.repo.findAndCount({
      where: { teamId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: page.limit,
      skip: page.offset,
    });
    return { items, total };
  }

  /** A worker takes a queued export (false: it was cancelled, or another attempt holds it). */
  @GenerateSql({ params: [EXPORT] })
  async start(id: string): Promise<boolean> {
    const { affected } = await this.modify(
      `UPDATE file_exports SET status = 'Running' WHERE id = $1 AND status IN ('Pending', 'Running') RETURNING id`,
      [id],
    );
    return affected > 0;
  }

  /** Its status now (the worker's cancel check between pages); null once removed. */
  @GenerateSql({ params: [EXPORT] })
  async status(id: string): Promise<string | null> {
    const rows = await this.query<{ status: string }>(`SELECT status FROM file_exports WHERE id = $1`, [id]);
    return rows[0]?.status ?? null;
  }

  /** The file is stored: false when the export was cancelled meanwhile (the caller removes the object). */
  @GenerateSql({ params: [EXPORT, { rows: 25, bytes: 4096, objectKey: 'file_exports/1/x.parquet', at: AT }] })
  async complete(
    id: string,
    done: { rows: number; bytes: number; objectKey: string | null; at: Date },
  ): Promise<boolean> {
    const { affected } = await this.modify(
      `UPDATE file_exports SET status = 'Complete', row_count = $2, bytes = $3, object_key = $4, finished_at = $5
        WHERE id = $1 AND status = 'Running' RETURNING id`,
      [id, done.rows, done.bytes, done.objectKey, done.at],
    );
    return affected > 0;
  }

  @GenerateSql({ params: [EXPORT, 'writing to s3://exports: connect ECONNREFUSED', AT] })
  async fail(id: string, error: string, at: Date): Promise<void> {
    await this.query(
      `UPDATE file_exports SET status = 'Failed', error = $2, finished_at = $3
        WHERE id = $1 AND status IN ('Pending', 'Running')`,
      [id, error.slice(0, 2000), at],
    );
  }

  /** Cancels a queued or running export; false when it had already ended. */
  @GenerateSql({ params: [EXPORT, AT] })
  async cancel(id: string, at: Date): Promise<boolean> {
    const { affected } = await this.modify(
      `UPDATE file_exports SET status = 'Cancelled', finished_at = $2
        WHERE id = $1 AND status IN ('Pending', 'Running') RETURNING id`,
      [id, at],
    );
    return affected > 0;
  }

  /** Up to `limit` expired exports (oldest first) with their objects. */
  @GenerateSql({ params: [AT, 500] })
  async expired(now: Date, limit: number): Promise<{ id: string; object_key: string | null }[]> {
    return this.query<{ id: string; object_key: string | null }>(
      `SELECT id, object_key FROM file_exports WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    );
  }

  @GenerateSql({ params: [[EXPORT]] })
  async delete(ids: readonly string[]): Promise<void> {
    if (ids.length) await this.query(`DELETE FROM file_exports WHERE id = ANY($1::uuid[])`, [ids]);
  }
}
