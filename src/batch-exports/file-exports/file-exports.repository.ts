import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import type { PageParams } from '../../common/pagination/page.js';
import { FileExportEntity } from './file-export.entity.js';

/** The statements over `file_exports`: the service and the worker never build SQL. */
@Injectable()
export class FileExportsRepository {
  private readonly repo: Repository<FileExportEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.repo = dataSource.getRepository(FileExportEntity);
  }

  insert(entity: Omit<FileExportEntity, 'id'>): Promise<FileExportEntity> {
    return this.repo.save(this.repo.create(entity));
  }

  /** The export of the project, or null (another project's is not found). */
  findInProject(teamId: number, id: string): Promise<FileExportEntity | null> {
    return this.repo.findOneBy({ teamId, id });
  }

  findById(id: string): Promise<FileExportEntity | null> {
    return this.repo.findOneBy({ id });
  }

  /** The project's exports, newest first. */
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
  async start(id: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `UPDATE file_exports SET status = 'Running' WHERE id = $1 AND status IN ('Pending', 'Running') RETURNING id`,
      [id],
    )) as [unknown[], number];
    return rows[1] > 0;
  }

  /** Its status now (the worker's cancel check between pages); null once removed. */
  async status(id: string): Promise<string | null> {
    const rows = (await this.dataSource.query(`SELECT status FROM file_exports WHERE id = $1`, [id])) as {
      status: string;
    }[];
    return rows[0]?.status ?? null;
  }

  /** The file is stored: false when the export was cancelled meanwhile (the caller removes the object). */
  async complete(
    id: string,
    done: { rows: number; bytes: number; objectKey: string | null; at: Date },
  ): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `UPDATE file_exports SET status = 'Complete', row_count = $2, bytes = $3, object_key = $4, finished_at = $5
        WHERE id = $1 AND status = 'Running' RETURNING id`,
      [id, done.rows, done.bytes, done.objectKey, done.at],
    )) as [unknown[], number];
    return rows[1] > 0;
  }

  async fail(id: string, error: string, at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE file_exports SET status = 'Failed', error = $2, finished_at = $3
        WHERE id = $1 AND status IN ('Pending', 'Running')`,
      [id, error.slice(0, 2000), at],
    );
  }

  /** Cancels a queued or running export; false when it had already ended. */
  async cancel(id: string, at: Date): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `UPDATE file_exports SET status = 'Cancelled', finished_at = $2
        WHERE id = $1 AND status IN ('Pending', 'Running') RETURNING id`,
      [id, at],
    )) as [unknown[], number];
    return rows[1] > 0;
  }

  /** Up to `limit` expired exports (oldest first) with their objects. */
  async expired(now: Date, limit: number): Promise<{ id: string; object_key: string | null }[]> {
    return (await this.dataSource.query(
      `SELECT id, object_key FROM file_exports WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    )) as { id: string; object_key: string | null }[];
  }

  async delete(ids: readonly string[]): Promise<void> {
    if (ids.length) await this.dataSource.query(`DELETE FROM file_exports WHERE id = ANY($1::uuid[])`, [ids]);
  }
}
