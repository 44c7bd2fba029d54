import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager, QueryFailedError } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { isUuid } from '../common/validation/ids.js';
import { parseZonedTimestamp } from '../common/validation/timestamps.js';
import { AppConfig } from '../config/config.js';
import { MembershipsService } from '../memberships/memberships.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { BatchExportEntity } from './batch-export.entity.js';
import { BatchExportsRepository, type BatchExportFields, type LogEntry } from './batch-exports.repository.js';
import {
  type Config,
  configViolation,
  deepMerge,
  type DestinationType,
  splitSecrets,
} from './destinations.js';
import type {
  BackfillInputDto,
  CreateBatchExportDto,
  UpdateBatchExportDto,
} from './dto/batch-export-input.dto.js';
import { parseLevels, type BatchExportLogDto, toBatchExportLogDto } from './dto/batch-export-log.dto.js';
import { type BatchExportRunDto, toBatchExportRunDto } from './dto/batch-export-run.dto.js';
import { type BatchExportDto, toBatchExportDto } from './dto/batch-export.dto.js';
import { backfillRange, INTERVAL_SPECS } from './schedule.js';

/** A timestamp field of a request, already validated by the DTO: undefined (absent), null or a Date. */
function timestampOf(value: string | null | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value;
  return parseZonedTimestamp(value)!;
}

function assertConfig(type: DestinationType, config: Config): void {
  const violation = configViolation(type, config);
  if (violation) throw ApiError.validation(violation.detail, violation.attr, violation.code);
}

function assertStartBeforeEnd(startAt: Date | null, endAt: Date | null): void {
  if (startAt && endAt && startAt.getTime() >= endAt.getTime()) {
    throw ApiError.validation('end_at must be later than start_at.', 'end_at');
  }
}

/**
 * A failed statement that carried a destination config is re-thrown without its parameters or the server's
 * row detail ("Failing row contains …"), which could hold secrets, so no log line of the exception filter can
 * show them.
 */
function withoutParameters(err: unknown): unknown {
  if (err instanceof QueryFailedError) {
    Object.assign(err, { parameters: undefined, detail: undefined });
    const driverError: unknown = err.driverError;
    if (driverError && typeof driverError === 'object') Object.assign(driverError, { detail: undefined });
  }
  return err;
}

const VISIBLE_FIELDS = [
  'name',
  'model',
  'destination',
  'interval',
  'paused',
  'last_paused_at',
  'start_at',
  'end_at',
  'hogql_query',
] as const;

/**
 * Batch exports of an organization (decisions §8): any member reads and writes them. Configs are validated per
 * destination type; secret keys are stored apart and never returned, logged or echoed. Every change is logged
 * in the export's log. Run creation is the scheduler's (`createDueRuns`) and backfill's.
 */
@Injectable()
export class BatchExportsService {
  private readonly logger = new Logger(BatchExportsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly exports: BatchExportsRepository,
    private readonly memberships: MembershipsService,
    private readonly projects: ProjectsService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async list(principal: Principal, organizationId: string, page: PageParams): Promise<Page<BatchExportDto>> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const onlyTeams = principal.onlyProjects;
    const { items, total } = await this.exports.pageForOrganization(access.organizationId, onlyTeams, page);
    return { items: await this.toDtos(items), total };
  }

  async retrieve(principal: Principal, organizationId: string, id: string): Promise<BatchExportDto> {
    const entity = await this.find(principal, organizationId, id);
    return (await this.toDtos([entity]))[0];
  }

  async create(
    principal: Principal,
    organizationId: string,
    input: CreateBatchExportDto,
  ): Promise<BatchExportDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const project = await this.projects.findDefault(access.organizationId);
    if (!project) throw ApiError.notFound('This organization has no project to export.');
    this.assertProjectAllowed(principal, project.id, access.organizationId);
    const type = input.destination.type;
    const config = input.destination.config ?? {};
    assertConfig(type, config);
    const startAt = timestampOf(input.start_at) ?? null;
    const endAt = timestampOf(input.end_at) ?? null;
    assertStartBeforeEnd(startAt, endAt);
    const now = this.clock.now();
    const paused = input.paused ?? false;
    const { visible, secrets } = splitSecrets(type, config);
    const fields: BatchExportFields & { destinationSecrets: Config } = {
      organizationId: access.organizationId,
      teamId: project.id,
      name: input.name,
      model: input.model ?? 'events',
      destinationType: type,
      destinationConfig: visible,
      destinationSecrets: secrets,
      interval: input.interval,
      paused,
      lastPausedAt:
        input.last_paused_at !== undefined ? timestampOf(input.last_paused_at)! : paused ? now : null,
      startAt,
      endAt,
      hogqlQuery: input.hogql_query ?? '',
      createdAt: now,
      lastUpdatedAt: now,
    };
    const id = await this.dataSource
      .transaction(async (manager) => {
        const created = await this.exports.insert(fields, manager);
        if (paused) await this.exports.openPause(created, now, manager);
        await this.exports.addLogs(
          [
            this.entry(
              created,
              now,
              `Batch export created: ${input.model ?? 'events'} to ${type} every ${input.interval}` +
                `${paused ? ', paused' : ''}.`,
            ),
          ],
          manager,
        );
        return created;
      })
      .catch((err: unknown) => {
        throw withoutParameters(err);
      });
    this.logger.log(
      { batchExportId: id, organizationId: access.organizationId, type },
      'batch export created',
    );
    return this.retrieveUnchecked(access.organizationId, id);
  }

  /**
   * PATCH: the fields sent, applied under a row lock. `destination.config` is deep-merged into the current one
   * (secrets included) and the result validated as a whole; the type cannot change. `paused` has the effect of
   * pause/unpause.
   */
  async update(
    principal: Principal,
    organizationId: string,
    id: string,
    input: UpdateBatchExportDto,
  ): Promise<BatchExportDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (!isUuid(id)) throw ApiError.notFound();
    await this.dataSource
      .transaction(async (manager) => {
        const current = await this.exports.findInOrganization(access.organizationId, id, {
          manager,
          lock: true,
          withSecrets: input.destination?.config !== undefined,
        });
        if (!current) throw ApiError.notFound();
        this.assertProjectAllowed(principal, current.teamId, access.organizationId);
        const now = this.clock.now();
        const changes: Partial<BatchExportFields> = {};
        if (input.name !== undefined) changes.name = input.name;
        if (input.model !== undefined) changes.model = input.model;
        if (input.interval !== undefined) changes.interval = input.interval;
        if (input.hogql_query !== undefined) changes.hogqlQuery = input.hogql_query;
        if (input.destination) {
          const { type, config } = input.destination;
          if (type !== undefined && type !== current.destinationType) {
            throw ApiError.validation(
              'The destination type cannot be changed; create another batch export instead.',
              'destination__type',
            );
          }
          if (config !== undefined) {
            const merged = this.mergedConfig(current, config);
            const { visible, secrets } = splitSecrets(current.destinationType, merged);
            changes.destinationConfig = visible;
            changes.destinationSecrets = secrets;
          }
        }
        const startAt = timestampOf(input.start_at);
        const endAt = timestampOf(input.end_at);
        if (startAt !== undefined) changes.startAt = startAt;
        if (endAt !== undefined) changes.endAt = endAt;
        assertStartBeforeEnd(
          startAt === undefined ? current.startAt : startAt,
          endAt === undefined ? current.endAt : endAt,
        );
        const lastPausedAt = timestampOf(input.last_paused_at);
        if (lastPausedAt !== undefined) changes.lastPausedAt = lastPausedAt;

        const sent = VISIBLE_FIELDS.filter((f) => input[f] !== undefined && f !== 'paused');
        const logs: LogEntry[] = [];
        if (sent.length) logs.push(this.entry(id, now, `Batch export updated: ${sent.join(', ')}.`));
        if (input.paused !== undefined && input.paused !== current.paused) {
          await this.applyPause(current, input.paused, now, manager, changes, lastPausedAt !== undefined);
          logs.push(this.entry(id, now, input.paused ? 'Batch export paused.' : 'Batch export unpaused.'));
        }
        if (!Object.keys(changes).length && !logs.length) return;
        await this.exports.update(id, { ...changes, lastUpdatedAt: now }, manager);
        await this.exports.addLogs(logs, manager);
      })
      .catch((err: unknown) => {
        throw withoutParameters(err);
      });
    return this.retrieveUnchecked(access.organizationId, id);
  }

  /** Soft delete: hidden from every read, never scheduled again, its Starting and Running runs cancelled. */
  async delete(principal: Principal, organizationId: string, id: string): Promise<void> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (!isUuid(id)) throw ApiError.notFound();
    await this.dataSource.transaction(async (manager) => {
      const current = await this.exports.findInOrganization(access.organizationId, id, {
        manager,
        lock: true,
      });
      if (!current) throw ApiError.notFound();
      this.assertProjectAllowed(principal, current.teamId, access.organizationId);
      await this.exports.softDelete(id, this.clock.now(), manager);
    });
  }

  /** pause (`paused` true) and unpause (false): idempotent; returns the state. */
  async setPaused(
    principal: Principal,
    organizationId: string,
    id: string,
    paused: boolean,
  ): Promise<{ paused: boolean }> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (!isUuid(id)) throw ApiError.notFound();
    await this.dataSource.transaction(async (manager) => {
      const current = await this.exports.findInOrganization(access.organizationId, id, {
        manager,
        lock: true,
      });
      if (!current) throw ApiError.notFound();
      this.assertProjectAllowed(principal, current.teamId, access.organizationId);
      if (current.paused === paused) return;
      const now = this.clock.now();
      const changes: Partial<BatchExportFields> = {};
      await this.applyPause(current, paused, now, manager, changes, false);
      await this.exports.update(id, { ...changes, lastUpdatedAt: now }, manager);
      await this.exports.addLogs(
        [this.entry(id, now, paused ? 'Batch export paused.' : 'Batch export unpaused.')],
        manager,
      );
    });
    return { paused };
  }

  /**
   * Creates one run per aligned interval ending in `(start_at, end_at]` and records the backfill, in one
   * transaction. `start_at` < `end_at` ≤ now, at most BACKFILL_MAX_RUNS intervals, at least one.
   */
  async backfill(
    principal: Principal,
    organizationId: string,
    id: string,
    input: BackfillInputDto,
  ): Promise<{ backfill_id: string }> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (!isUuid(id)) throw ApiError.notFound();
    const startAt = parseZonedTimestamp(input.start_at)!;
    const endAt = parseZonedTimestamp(input.end_at)!;
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager) => {
      const current = await this.exports.findInOrganization(access.organizationId, id, {
        manager,
        lock: true,
      });
      if (!current) throw ApiError.notFound();
      this.assertProjectAllowed(principal, current.teamId, access.organizationId);
      if (startAt.getTime() >= endAt.getTime()) {
        throw ApiError.validation('end_at must be later than start_at.', 'end_at');
      }
      if (endAt.getTime() > now.getTime()) {
        throw ApiError.validation('end_at cannot be in the future.', 'end_at');
      }
      const { first, count } = backfillRange(current.interval, startAt, endAt);
      const max = this.config.get('BACKFILL_MAX_RUNS');
      if (count > max) {
        throw ApiError.validation(
          `This range holds ${count} intervals of ${current.interval}; a backfill may create at most ${max} runs.`,
          'start_at',
        );
      }
      if (count === 0) {
        throw ApiError.validation(
          `No ${current.interval} interval ends within this range; nothing to backfill.`,
          'end_at',
        );
      }
      const backfillId = await this.exports.insertBackfill(
        {
          batchExportId: id,
          startAt,
          endAt,
          spec: INTERVAL_SPECS[current.interval],
          firstK: first,
          count,
        },
        now,
        manager,
      );
      await this.exports.addLogs(
        [
          this.entry(
            id,
            now,
            `Backfill ${backfillId} from ${startAt.toISOString()} to ${endAt.toISOString()}: ${count} run${count === 1 ? '' : 's'}.`,
          ),
        ],
        manager,
      );
      return { backfill_id: backfillId };
    });
  }

  async listRuns(
    principal: Principal,
    organizationId: string,
    id: string,
    page: PageParams,
  ): Promise<Page<BatchExportRunDto>> {
    const entity = await this.find(principal, organizationId, id);
    const { items, total } = await this.exports.pageRuns(entity.id, page);
    return { items: items.map(toBatchExportRunDto), total };
  }

  /** Cancels a Starting or Running run (400 for any other status): status Cancelled, finished_at now. */
  async cancelRun(
    principal: Principal,
    organizationId: string,
    id: string,
    runId: string,
  ): Promise<BatchExportRunDto> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    if (!isUuid(id) || !isUuid(runId)) throw ApiError.notFound();
    return this.dataSource.transaction(async (manager) => {
      const current = await this.exports.findInOrganization(access.organizationId, id, { manager });
      if (!current) throw ApiError.notFound();
      this.assertProjectAllowed(principal, current.teamId, access.organizationId);
      const result = await this.exports.cancelRun(id, runId, this.clock.now(), manager);
      if (!result) throw ApiError.notFound();
      if (!result.cancelled) {
        throw ApiError.validation(
          `Only a Starting or Running run can be cancelled; this one is ${result.run.status}.`,
          null,
          'invalid_state',
        );
      }
      return toBatchExportRunDto(result.run);
    });
  }

  async listLogs(
    principal: Principal,
    organizationId: string,
    id: string,
    filters: { level?: string; search?: string },
    page: PageParams,
  ): Promise<Page<BatchExportLogDto>> {
    const entity = await this.find(principal, organizationId, id);
    const { items, total } = await this.exports.pageLogs(
      entity.id,
      { levels: filters.level ? parseLevels(filters.level) : null, search: filters.search || null },
      page,
    );
    return { items: items.map(toBatchExportLogDto), total };
  }

  /**
   * Creates every due run of every export at `now` (decisions §8), in one statement; safe to run at once on any
   * number of replicas and to retry. Called by the scheduler's tick; tests call it with a fixed `now`.
   */
  createDueRuns(now: Date): Promise<{ created: number; exports: number }> {
    return this.exports.createDueRuns(now, this.config.get('SCHEDULER_MAX_CATCHUP'));
  }

  /** Pauses or unpauses `current` at `now`: pause windows, and `last_paused_at` unless the caller sets it. */
  private async applyPause(
    current: BatchExportEntity,
    paused: boolean,
    now: Date,
    manager: EntityManager,
    changes: Partial<BatchExportFields>,
    lastPausedAtSent: boolean,
  ): Promise<void> {
    changes.paused = paused;
    if (paused) {
      if (!lastPausedAtSent) changes.lastPausedAt = now;
      await this.exports.openPause(current.id, now, manager);
    } else {
      await this.exports.closePause(current.id, now, manager);
    }
  }

  /** The current config (secrets included) with `patch` deep-merged, validated as a whole. */
  private mergedConfig(current: BatchExportEntity, patch: Config): Config {
    const type = current.destinationType;
    // Unknown keys of the patch first, so nothing it holds is dropped by the merge.
    const unknown = configViolation(type, patch);
    if (unknown?.code === 'unknown_field')
      throw ApiError.validation(unknown.detail, unknown.attr, unknown.code);
    const merged = deepMerge({ ...current.destinationConfig, ...current.destinationSecrets }, patch);
    assertConfig(type, merged);
    return merged;
  }

  private assertProjectAllowed(principal: Principal, teamId: number, organizationId: string): void {
    if (!principal.allowsProject(teamId, organizationId)) {
      throw ApiError.permissionDenied('This API key is not allowed to access this project.');
    }
  }

  private entry(batchExportId: string, timestamp: Date, message: string, level: LogEntry['level'] = 'INFO') {
    return { batchExportId, timestamp, level, message } satisfies LogEntry;
  }

  private async find(principal: Principal, organizationId: string, id: string): Promise<BatchExportEntity> {
    const access = await this.memberships.requireAccess(principal, organizationId);
    const entity = isUuid(id) ? await this.exports.findInOrganization(access.organizationId, id) : null;
    if (!entity) throw ApiError.notFound();
    this.assertProjectAllowed(principal, entity.teamId, access.organizationId);
    return entity;
  }

  private async retrieveUnchecked(organizationId: string, id: string): Promise<BatchExportDto> {
    const entity = await this.exports.findInOrganization(organizationId, id);
    if (!entity) throw ApiError.notFound();
    return (await this.toDtos([entity]))[0];
  }

  private async toDtos(entities: BatchExportEntity[]): Promise<BatchExportDto[]> {
    const runs = await this.exports.latestRuns(entities.map((e) => e.id));
    return entities.map((e) => toBatchExportDto(e, (runs.get(e.id) ?? []).map(toBatchExportRunDto)));
  }
}
