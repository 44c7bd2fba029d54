import { Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { Principal } from '../../common/auth/principal.js';
import { ApiError } from '../../common/errors/api-error.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { Clock } from '../../common/time/clock.js';
import { parseZonedTimestamp } from '../../common/validation/timestamps.js';
import { AppConfig } from '../../config/config.js';
import type { ProjectAccess } from '../../memberships/memberships.service.js';
import { ProjectsService } from '../../projects/projects.service.js';
import type { CreateFileExportDto, FileExportDto } from './dto/file-export.dto.js';
import type { FileExportEntity } from './file-export.entity.js';
import { FileExportQueue } from './file-export-queue.js';
import { FileExportStore } from './file-export-store.js';
import { FileExportWorker } from './file-export-worker.js';
import { CONTENT_TYPES, fileName, responseStore, writeExportFile } from './file-export-writer.js';
import { FileExportsRepository } from './file-exports.repository.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** `Retry-After` of a request refused for the requester's queued exports: a file usually takes a while. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 30;

/** 429 `throttled`: the requester already has `max` exports Pending or Running in the project. */
function tooManyQueued(max: number): ApiError {
  return new ApiError(
    429,
    'throttled',
    `You already have ${max} file exports Pending or Running in this project (at most ${max}, ` +
      'FILE_EXPORT_MAX_QUEUED_PER_PROJECT). Wait for one to end, or cancel one, before requesting another.',
    null,
    'throttled_error',
    { 'Retry-After': String(QUEUE_FULL_RETRY_AFTER_SECONDS) },
  );
}

/** The resource whose access level file exports follow: the same data a batch export would deliver. */
const RESOURCE = 'batch_export';

export function toFileExportDto(e: FileExportEntity, now: Date): FileExportDto {
  return {
    id: e.id,
    dashboard: null,
    insight: null,
    export_format: e.format,
    export_context: { model: e.model, start_at: e.startAt.toISOString(), end_at: e.endAt.toISOString() },
    created_at: e.createdAt.toISOString(),
    has_content: e.status === 'Complete' && e.expiresAt > now,
    filename: fileName(e),
    expires_after: e.expiresAt.toISOString(),
    exception: e.error,
    status: e.status,
    row_count: e.rowCount === null ? null : Number(e.rowCount),
    bytes: e.bytes === null ? null : Number(e.bytes),
    created_by: e.createdById,
    finished_at: e.finishedAt?.toISOString() ?? null,
  };
}

/**
 * On-demand file exports of a project (docs/batch-exports.md, "File exports"). Who may do what: the project's
 * `batch_export` level (its access controls) — `none` hides them (404), `viewer` lists and downloads, `editor`
 * creates and cancels.
 */
@Injectable()
export class FileExportsService {
  private readonly logger = new Logger(FileExportsService.name);

  constructor(
    private readonly projects: ProjectsService,
    private readonly exports: FileExportsRepository,
    private readonly store: FileExportStore,
    private readonly queue: FileExportQueue,
    private readonly worker: FileExportWorker,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, projectId: number, body: CreateFileExportDto): Promise<FileExportDto> {
    await this.enter(principal, projectId, 'editor');
    const start = parseZonedTimestamp(body.export_context.start_at)!;
    const end = parseZonedTimestamp(body.export_context.end_at)!;
    if (start >= end) {
      throw ApiError.validation('Must be after start_at.', 'export_context__end_at');
    }
    const maxDays = this.config.get('FILE_EXPORT_MAX_RANGE_DAYS');
    if (end.getTime() - start.getTime() > maxDays * DAY_MS) {
      throw ApiError.validation(`The range may cover at most ${maxDays} days.`, 'export_context__end_at');
    }
    const now = this.clock.now();
    const row: Omit<FileExportEntity, 'id'> = {
      teamId: projectId,
      createdById: principal.userId,
      model: body.export_context.model,
      format: body.export_format,
      startAt: start,
      endAt: end,
      // Without an object store nothing is written ahead: the content route streams the file.
      status: this.store.configured ? 'Pending' : 'Complete',
      rowCount: null,
      bytes: null,
      objectKey: null,
      error: null,
      createdAt: now,
      finishedAt: this.store.configured ? null : now,
      expiresAt: new Date(now.getTime() + this.config.get('FILE_EXPORT_TTL_HOURS') * HOUR_MS),
    };
    if (!this.store.configured) return toFileExportDto(await this.exports.insert(row), now);
    const max = this.config.get('FILE_EXPORT_MAX_QUEUED_PER_PROJECT');
    const entity = await this.exports.insertWithinQueueCap(row, max, (id, db) => this.queue.send(id, db));
    if (!entity) throw tooManyQueued(max);
    return toFileExportDto(entity, now);
  }

  async list(principal: Principal, projectId: number, page: PageParams): Promise<Page<FileExportDto>> {
    await this.enter(principal, projectId, 'viewer');
    const now = this.clock.now();
    const { items, total } = await this.exports.list(projectId, page);
    return { items: items.map((e) => toFileExportDto(e, now)), total };
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<FileExportDto> {
    return toFileExportDto(await this.find(principal, projectId, id, 'viewer'), this.clock.now());
  }

  /** Cancels a queued or running export: its job stops, nothing of its file stays stored. */
  async cancel(principal: Principal, projectId: number, id: string): Promise<FileExportDto> {
    const entity = await this.find(principal, projectId, id, 'editor');
    const now = this.clock.now();
    if (!(await this.exports.cancel(entity.id, now))) {
      throw ApiError.conflict(
        `The export is ${entity.status}: only a Pending or Running export can be cancelled.`,
      );
    }
    // A queued job is dropped; a running one is ended by its worker (which sees the status between pages).
    if (entity.status === 'Pending') await this.queue.cancel(entity.id);
    return toFileExportDto((await this.exports.findById(entity.id))!, now);
  }

  /**
   * The file: a redirect to a presigned URL of the stored object, or (no object store) the file streamed from the
   * database. 409 with Retry-After while it is being written (as PostHog's `content`), 409 once it failed, was
   * cancelled or expired.
   */
  async content(principal: Principal, projectId: number, id: string, res: Response): Promise<void> {
    const entity = await this.find(principal, projectId, id, 'viewer');
    if (await this.worker.hiddenFrom(entity, principal.userId)) {
      throw ApiError.permissionDenied(
        "This export was made by another user and may hold recordings the project's recording access rules hide " +
          'from you. Request an export of your own: it leaves those out.',
      );
    }
    const now = this.clock.now();
    if (entity.status === 'Pending' || entity.status === 'Running') {
      res.setHeader('Retry-After', '5');
      throw ApiError.conflict('The file is not ready yet: try again shortly.');
    }
    if (entity.status !== 'Complete' || entity.expiresAt <= now) {
      const why = entity.status === 'Complete' ? 'expired' : entity.status;
      throw ApiError.conflict(`The export has no file: it is ${why}.`);
    }
    res.setHeader('Content-Type', CONTENT_TYPES[entity.format]);
    res.setHeader('Content-Disposition', `attachment; filename="${fileName(entity)}"`);
    if (entity.objectKey) {
      res.redirect(302, await this.store.presignedUrl(entity.objectKey, fileName(entity), now));
      return;
    }
    // The file outlives the request's deadline (REQUEST_TIMEOUT_MS, whose answer would end a started body as if
    // it were whole): the headers go now and the rows follow outside the handler.
    res.status(200);
    res.flushHeaders();
    void this.stream(entity, res);
  }

  /** The file written to the response as it is read (a page at a time); a client that leaves ends the read. */
  private async stream(entity: FileExportEntity, res: Response): Promise<void> {
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    try {
      const from = await this.worker.fileSource(entity);
      // Stored with no object: an export whose range held no rows, written before empty files were stored. Its
      // file is the empty one, whatever the range holds now.
      if (entity.objectKey === null && entity.rowCount !== null) from.source = null;
      const stopped = async () => {
        if (abort.signal.aborted) throw new Error('the client went away');
      };
      await writeExportFile(entity, from, responseStore(res), '', abort.signal, stopped);
      res.end();
    } catch (err) {
      // The status was sent: the connection is cut, so the client sees a broken file, never a short one.
      if (!abort.signal.aborted) {
        this.logger.warn({ id: entity.id, reason: (err as Error).message }, 'streamed file export failed');
      }
      res.destroy(err as Error);
    }
  }

  /** The project (404 / 403 as every project route), the key's projects, then the `batch_export` level. */
  private async enter(
    principal: Principal,
    projectId: number,
    need: 'viewer' | 'editor',
  ): Promise<ProjectAccess> {
    const { project, access } = await this.projects.retrieve(principal, projectId);
    if (!principal.allowsProject(project.id, project.organizationId)) {
      throw ApiError.permissionDenied('This API key is not allowed to access this project.');
    }
    access.requireResource(RESOURCE, need);
    return access;
  }

  private async find(
    principal: Principal,
    projectId: number,
    id: string,
    need: 'viewer' | 'editor',
  ): Promise<FileExportEntity> {
    await this.enter(principal, projectId, need);
    const entity = await this.exports.findInProject(projectId, id);
    if (!entity) throw ApiError.notFound();
    return entity;
  }
}
