import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { recordChanges } from '../common/activity/activity-context.js';
import { ApiError } from '../common/errors/api-error.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import type { AccessControlObject } from '../access-controls/access-controls.service.js';
import { Clock } from '../common/time/clock.js';
import { parseZonedTimestamp } from '../common/validation/timestamps.js';
import { throwIfViolated } from '../common/validation/violation.js';
import { AppConfig } from '../config/config.js';
import { TransactionHost } from '../database/transactions.js';
import { MembershipsService, type ProjectAccess } from '../memberships/memberships.service.js';
import { BATCH_EXPORT, requireExport, visibleExports } from './batch-export-access.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { BatchExportEntity } from './batch-export.entity.js';
import type { BatchExportScope, ScopeAccess } from './batch-export-scope.js';
import { BatchExportsRepository, type BatchExportFields, type LogEntry } from './batch-exports.repository.js';
import {
  assertConfig,
  assertCreatable,
  backfillPlan,
  scheduleFields,
  assertStartBeforeEnd,
  timestampOf,
  SECRET_COLUMNS,
  VISIBLE_FIELDS,
  webhookChanges,
  withoutParameters,
} from './batch-export-input-rules.js';
import { type Config, configViolation, deepMerge, splitSecrets } from './destinations.js';
import type {
  BackfillInputDto,
  CreateBatchExportDto,
  ReplaceBatchExportDto,
  UpdateBatchExportDto,
} from './dto/batch-export-input.dto.js';
import { parseLevels, type BatchExportLogDto, toBatchExportLogDto } from './dto/batch-export-log.dto.js';
import { type BatchExportRunDto, toBatchExportRunDto } from './dto/batch-export-run.dto.js';
import { type BackfillCreatedDto, type BatchExportDto, toBatchExportDto } from './dto/batch-export.dto.js';
import { cadenceOf, intervalAt, zonedSpec } from './schedule.js';
import { fieldChanges } from './batch-export-changes.js';
import { incrementalViolation, type StoredIncremental } from './incremental.js';
import { ExportModels } from './runs/export-models.js';

/**
 * Batch exports of an organization (docs/decisions.md §8), on its path and on each project's (`BatchExportScope`:
 * the same checks, a project path finding only that project's exports): members read and write those of the projects they may
 * see, as the access rules of the `batch_export` resource and of each export allow (docs/security.md). Configs are validated per
 * destination type; secret keys are stored apart and never returned, logged or echoed. Every change is logged
 * in the export's log. Run creation is the scheduler's (`createDueRuns`) and backfill's.
 */
@Injectable()
export class BatchExportsService {
  private readonly logger = new Logger(BatchExportsService.name);

  constructor(
    private readonly transactions: TransactionHost,
    private readonly exports: BatchExportsRepository,
    private readonly memberships: MembershipsService,
    private readonly projects: ProjectsService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly models: ExportModels,
  ) {}

  /**
   * The organization's exports the caller may see: of the projects the key reaches and the caller may see, at a
   * `batch_export` level above `none`, less those the access rules of an export hide from them.
   */
  async list(principal: Principal, scope: BatchExportScope, page: PageParams): Promise<Page<BatchExportDto>> {
    const access = await this.enter(principal, scope);
    const onlyTeams = access.teamId !== null ? [access.teamId] : principal.onlyProjects;
    const { items, total } = await this.exports.pageForOrganization(
      access.organizationId,
      onlyTeams,
      page,
      visibleExports(principal.userId, access.projects, access.complete),
    );
    return { items: await this.toDtos(items), total };
  }

  async retrieve(principal: Principal, scope: BatchExportScope, id: string): Promise<BatchExportDto> {
    const entity = await this.find(principal, scope, id);
    return (await this.toDtos([entity]))[0];
  }

  async create(
    principal: Principal,
    scope: BatchExportScope,
    input: CreateBatchExportDto,
  ): Promise<BatchExportDto> {
    const access = await this.enter(principal, scope);
    // The project of the path; on the organization path, the first project the caller may see (and the key
    // reaches): exports are made there.
    const project =
      access.teamId !== null
        ? { id: access.teamId }
        : await this.projects.findDefaultFor(principal, access.organizationId);
    if (!project) throw ApiError.notFound('This organization has no project to export.');
    this.assertProjectAllowed(principal, project.id, access.organizationId);
    // A project beyond the bound of the access statement is not one a member may export from (404).
    const projectAccess = access.project(project.id);
    if (!projectAccess) throw ApiError.notFound('This organization has no project to export.');
    projectAccess.requireResource('batch_export', 'editor');
    const type = input.destination.type;
    const config = input.destination.config ?? {};
    assertCreatable(type);
    assertConfig(type, config);
    const startAt = timestampOf(input.start_at) ?? null;
    const endAt = timestampOf(input.end_at) ?? null;
    assertStartBeforeEnd(startAt, endAt);
    const now = this.clock.now();
    const paused = input.paused ?? false;
    const { visible, secrets } = splitSecrets(type, config);
    const incremental: StoredIncremental = {
      mode: input.incremental_mode ?? 'APPEND',
      primaryKey: input.primary_key ?? null,
      versionKey: input.version_key ?? null,
    };
    this.assertIncremental(input.model ?? 'events', type, incremental);
    const fields: BatchExportFields & { destinationSecrets: Config } = {
      organizationId: access.organizationId,
      teamId: project.id,
      createdById: principal.userId,
      name: input.name,
      model: input.model ?? 'events',
      destinationType: type,
      destinationConfig: visible,
      destinationSecrets: secrets,
      interval: input.interval,
      ...scheduleFields(input.interval, input),
      paused,
      lastPausedAt:
        input.last_paused_at !== undefined ? timestampOf(input.last_paused_at)! : paused ? now : null,
      startAt,
      endAt,
      hogqlQuery: input.hogql_query ?? '',
      filters: input.filters ?? null,
      incrementalMode: incremental.mode,
      primaryKey: incremental.primaryKey ? [...incremental.primaryKey] : null,
      versionKey: incremental.versionKey ? [...incremental.versionKey] : null,
      destinationIntegrationId: input.destination.integration_id ?? null,
      notificationWebhookUrl: null,
      ...webhookChanges(input, null),
      createdAt: now,
      lastUpdatedAt: now,
    };
    const id = await this.transactions
      .withTransaction(async () => {
        const created = await this.exports.insert(fields);
        if (paused) await this.exports.openPause(created, now);
        await this.exports.addLogs([
          this.entry(
            created,
            now,
            `Batch export created: ${input.model ?? 'events'} to ${type} ${cadenceOf(input.interval)}` +
              `${paused ? ', paused' : ''}.`,
          ),
        ]);
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
   * PATCH, and PUT (whose body has the required fields): the fields sent, applied under a row lock; fields left
   * out keep their value. `destination.config` is deep-merged into the current one (secrets included) and the
   * result validated as a whole; the type cannot change. `paused` has the effect of pause/unpause.
   */
  async update(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    input: UpdateBatchExportDto | ReplaceBatchExportDto,
  ): Promise<BatchExportDto> {
    const organization = await this.writeLocked(
      principal,
      scope,
      id,
      { withSecrets: input.destination?.config !== undefined },
      async (current) => {
        const now = this.clock.now();
        const { changes, lastPausedAt } = fieldChanges(input, current, {
          assertIncremental: (model, stored) =>
            this.assertIncremental(model, current.destinationType, stored),
          mergedConfig: (patch) => this.mergedConfig(current, patch),
        });

        const sent = VISIBLE_FIELDS.filter((f) => input[f] !== undefined && f !== 'paused');
        const logs: LogEntry[] = [];
        if (sent.length) logs.push(this.entry(id, now, `Batch export updated: ${sent.join(', ')}.`));
        if (input.paused !== undefined && input.paused !== current.paused) {
          await this.applyPause(current, input.paused, now, changes, lastPausedAt !== undefined);
          logs.push(this.entry(id, now, input.paused ? 'Batch export paused.' : 'Batch export unpaused.'));
        }
        // The activity log's changes: each field changed, before and after (secrets masked, never stored).
        const changed = Object.keys(changes).filter((k) => !SECRET_COLUMNS.has(k));
        recordChanges('BatchExport', { ...current }, { ...current, ...changes }, changed);
        if (Object.keys(changes).length || logs.length) {
          await this.exports.update(id, { ...changes, lastUpdatedAt: now });
          await this.exports.addLogs(logs);
        }
        return current.organizationId;
      },
    ).catch((err: unknown) => {
      throw withoutParameters(err);
    });
    return this.retrieveUnchecked(organization, id);
  }

  /** Soft delete: hidden from every read, never scheduled again, its Starting and Running runs cancelled. */
  async delete(principal: Principal, scope: BatchExportScope, id: string): Promise<void> {
    await this.writeLocked(principal, scope, id, {}, () => this.exports.softDelete(id, this.clock.now()));
  }

  /** pause (`paused` true) and unpause (false): idempotent; returns the state. */
  async setPaused(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    paused: boolean,
  ): Promise<{ paused: boolean }> {
    await this.writeLocked(principal, scope, id, {}, async (current) => {
      if (current.paused === paused) return;
      const now = this.clock.now();
      const changes: Partial<BatchExportFields> = {};
      await this.applyPause(current, paused, now, changes, false);
      await this.exports.update(id, { ...changes, lastUpdatedAt: now });
      await this.exports.addLogs([
        this.entry(id, now, paused ? 'Batch export paused.' : 'Batch export unpaused.'),
      ]);
    });
    return { paused };
  }

  /**
   * Creates one run per aligned interval ending in `(start_at, end_at]` and records the backfill, in one
   * transaction. `start_at` < `end_at` ≤ now, at most BACKFILL_MAX_RUNS intervals, at least one.
   */
  async backfill(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    input: BackfillInputDto,
  ): Promise<BackfillCreatedDto> {
    const startAt = parseZonedTimestamp(input.start_at)!;
    const endAt = parseZonedTimestamp(input.end_at)!;
    return this.writeLocked(principal, scope, id, {}, async (current) => {
      const now = this.clock.now();
      const { first, count } = backfillPlan(
        current,
        startAt,
        endAt,
        now,
        this.config.get('BACKFILL_MAX_RUNS'),
      );
      const backfillId = await this.exports.insertBackfill(
        {
          batchExportId: id,
          startAt,
          endAt,
          spec: zonedSpec(current),
          firstK: first,
          count,
          paused: current.paused,
        },
        now,
      );
      const runs = `${count} run${count === 1 ? '' : 's'}`;
      const range = `from ${startAt.toISOString()} to ${endAt.toISOString()}`;
      await this.exports.addLogs([this.entry(id, now, `Backfill ${backfillId} ${range}: ${runs}.`)]);
      const adjusted = intervalAt(current, first).start.toISOString();
      return {
        backfill_id: backfillId,
        total_expected_runs: count,
        adjusted_start_at: adjusted,
        total_records_count: null,
      };
    });
  }

  async listRuns(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    page: PageParams,
  ): Promise<Page<BatchExportRunDto>> {
    const entity = await this.find(principal, scope, id);
    const { items, total } = await this.exports.pageRuns(entity.id, page);
    return { items: items.map(toBatchExportRunDto), total };
  }

  /** Cancels a Starting or Running run (400 for any other status): status Cancelled, finished_at now. */
  async cancelRun(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    runId: string,
  ): Promise<BatchExportRunDto> {
    // The export is locked first, then the run (by cancelRun): the order of every writer (a worker's claim too).
    return this.writeLocked(principal, scope, id, {}, async () => {
      const result = await this.exports.cancelRun(id, runId, this.clock.now());
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
    scope: BatchExportScope,
    id: string,
    filters: { level?: string; search?: string },
    page: PageParams,
  ): Promise<Page<BatchExportLogDto>> {
    const entity = await this.find(principal, scope, id);
    const { items, total } = await this.exports.pageLogs(
      entity.id,
      { levels: filters.level ? parseLevels(filters.level) : null, search: filters.search || null },
      page,
    );
    return { items: items.map(toBatchExportLogDto), total };
  }

  /**
   * Creates every due run of every export at `now` (docs/decisions.md §8), in one statement; safe to run at once on any
   * number of replicas and to retry. Called by the scheduler's tick; tests call it with a fixed `now`.
   */
  createDueRuns(now: Date): Promise<{ created: number; exports: number }> {
    return this.exports.createDueRuns(
      now,
      this.config.get('SCHEDULER_MAX_CATCHUP'),
      this.config.get('SCHEDULER_TICK_CONNECTIONS'),
    );
  }

  /** Pauses or unpauses `current` at `now`: pause windows, and `last_paused_at` unless the caller sets it. */
  private async applyPause(
    current: BatchExportEntity,
    paused: boolean,
    now: Date,
    changes: Partial<BatchExportFields>,
    lastPausedAtSent: boolean,
  ): Promise<void> {
    changes.paused = paused;
    if (paused) {
      if (!lastPausedAtSent) changes.lastPausedAt = now;
      await this.exports.openPause(current.id, now);
    } else {
      await this.exports.closePause(current.id, now);
    }
  }

  /** The current config (secrets included) with `patch` deep-merged, validated as a whole. */
  /** 400 when the export's incremental settings, as saved, break a rule (src/batch-exports/incremental.ts). */
  private assertIncremental(
    model: string,
    type: BatchExportEntity['destinationType'],
    stored: StoredIncremental,
  ) {
    const declared = this.models.names().includes(model) ? this.models.get(model) : undefined;
    throwIfViolated(incrementalViolation(model, declared, type, stored));
  }

  private mergedConfig(current: BatchExportEntity, patch: Config): Config {
    const type = current.destinationType;
    // Unknown keys of the patch first, so nothing it holds is dropped by the merge.
    const unknown = configViolation(type, patch);
    if (unknown?.code === 'unknown_field') throwIfViolated(unknown);
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

  /**
   * The load-for-write preamble of every change, in one place: the caller's access to the organization, then
   * a transaction in which the export is loaded and locked until the end (its secrets with `withSecrets`), 404
   * when it is not the organization's (or deleted), 403 outside the key's projects; then `work` runs in the same
   * transaction. The export is the first thing every writer of the batch export tables locks (the workers'
   * claims and ends of runs too, `BatchExportRunsRepository#lockExport`), then its runs, backfills and logs: on
   * Citus, where a row lock of these reference tables locks the whole table, the other order deadlocked.
   */
  private async writeLocked<T>(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
    { withSecrets = false }: { withSecrets?: boolean },
    work: (current: BatchExportEntity) => Promise<T>,
  ): Promise<T> {
    const access = await this.enter(principal, scope);
    return this.transactions.withTransaction(async () => {
      const current = await this.findIn(access, id, { lock: true, withSecrets });
      if (!current) throw ApiError.notFound();
      requireExport(access, current, 'editor');
      this.assertProjectAllowed(principal, current.teamId, access.organizationId);
      return work(current);
    });
  }

  private async find(principal: Principal, scope: BatchExportScope, id: string): Promise<BatchExportEntity> {
    return (await this.findWithAccess(principal, scope, id)).entity;
  }

  /**
   * An export the caller may see (404 otherwise, and 403 outside the key's projects), with what the caller may
   * do in its project: for its reads.
   */
  async findWithAccess(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
  ): Promise<{ entity: BatchExportEntity; project: ProjectAccess }> {
    const access = await this.enter(principal, scope);
    const entity = await this.findIn(access, id);
    if (!entity) throw ApiError.notFound();
    const project = requireExport(access, entity, 'viewer');
    this.assertProjectAllowed(principal, entity.teamId, access.organizationId);
    return { entity, project };
  }

  /**
   * The export as the object of its access controls (`…/batch_exports/:id/access_controls` on the organization
   * and the project paths): 404 as retrieve.
   */
  async accessControlObject(
    principal: Principal,
    scope: BatchExportScope,
    id: string,
  ): Promise<AccessControlObject> {
    const { entity, project } = await this.findWithAccess(principal, scope, id);
    return {
      project: { id: entity.teamId, organizationId: entity.organizationId },
      access: project,
      kind: BATCH_EXPORT,
      id: entity.id,
      createdById: entity.createdById,
    };
  }

  /**
   * The caller's access in the scope of the request. The organization path: the organization checked (404 outside
   * it, 403 for a key that does not reach it), with the caller's access to each of its projects. The project path:
   * the project checked as every project route checks it (404 when it does not exist or the caller may not see
   * it, `none` included; 403 for a key restricted to other projects or organizations), with the caller's access to
   * it alone, so that nothing of another project is found there. Either way the same checks follow: the
   * `batch_export` resource and the export's own rules (`requireExport`, `visibleExports`).
   */
  private async enter(principal: Principal, scope: BatchExportScope): Promise<ScopeAccess> {
    if (scope.projectId === undefined) {
      const access = await this.memberships.requireAccessWithProjects(principal, scope.organizationId);
      return { ...access, teamId: null };
    }
    const { project, access } = await this.projects.retrieve(principal, scope.projectId);
    return {
      organizationId: project.organizationId,
      teamId: project.id,
      projects: new Map([[project.id, access]]),
      complete: true,
      project: (id) => (id === project.id ? access : undefined),
    };
  }

  /** The export of the scope (of its organization, and of its project on a project path), or null. */
  private async findIn(
    access: ScopeAccess,
    id: string,
    options?: { lock?: boolean; withSecrets?: boolean },
  ): Promise<BatchExportEntity | null> {
    const entity = await this.exports.findInOrganization(access.organizationId, id, options);
    if (!entity || (access.teamId !== null && entity.teamId !== access.teamId)) return null;
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
