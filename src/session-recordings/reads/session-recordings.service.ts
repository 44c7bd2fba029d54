import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/principal.js';
import { grants } from '../../common/auth/scopes.js';
import { randomUrlSafe } from '../../common/crypto/tokens.js';
import { ApiError } from '../../common/errors/api-error.js';
import { isUniqueViolation } from '../../common/errors/database-errors.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/config.js';
import { TransactionHost } from '../../database/transactions.js';
import { ExpensiveReads } from '../../common/expensive-reads/expensive-reads.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { PersonsService } from '../../persons/persons.service.js';
import type { ProjectEntity } from '../../projects/project.entity.js';
import type { ProjectAccess } from '../../memberships/memberships.service.js';
import {
  RecordingVisibility,
  RecordingVisibilityService,
} from '../../recording-access-rules/recording-visibility.service.js';
import type { RecordingListQueryDto } from './dto/recording-list-query.dto.js';
import type {
  ReplaceSessionRecordingDto,
  UpdateSessionRecordingDto,
} from '../ingestion/dto/session-recording-input.dto.js';
import {
  type RecordingStorageName,
  type SessionRecordingDto,
  toRecordingDto,
} from './dto/session-recording.dto.js';
import {
  type SharedSessionRecordingDto,
  toSharedRecordingDto,
} from '../sharing/dto/shared-session-recording.dto.js';
import type { SnapshotsQuery } from './dto/snapshots.dto.js';
import {
  type SharingConfigurationDto,
  toSharingDto,
  type UpdateSharingDto,
} from '../sharing/dto/sharing.dto.js';
import { retentionCutoff } from './recording-figures.js';
import { parseRecordingFilters } from './recording-filters.js';
import { type RecordingFilters, SessionRecordingsRepository } from '../session-recordings.repository.js';
import { RecordingSharingRepository } from '../sharing/recording-sharing.repository.js';
import { SnapshotReader, type StreamedBody } from './snapshot-reader.js';

/** Sharing access tokens are URL-safe base64; anything else is no token of ours. */
const ACCESS_TOKEN = /^[A-Za-z0-9_-]+$/;
/** Length of sharing access tokens (32 random bytes, base64url). */
export const ACCESS_TOKEN_LENGTH = 43;

/**
 * The recordings API of a project (docs/decisions.md §10): list, retrieve, update (person properties, viewed), soft
 * delete, snapshots, and sharing. Every operation starts with `enter`: `ProjectsService.requireResource` on
 * `session_recording` and what the caller may watch, read in one statement (404 for a project of another
 * organization, or one whose recordings the caller's access controls hide; 403 for keys restricted to other
 * projects, and for a write below `editor`).
 */
/**
 * Publishing a recording (enabling its sharing) or issuing a new link to it shows it to anyone with the link: the
 * key must be able to read recordings itself (`session_recording:read`), so `sharing_configuration:write` alone
 * cannot turn into reading recordings. Switching sharing off needs only `sharing_configuration:write`.
 */
function requireRecordingRead(principal: Principal, action: string): void {
  if (!grants(principal.scopes, 'session_recording:read')) {
    throw ApiError.permissionDenied(
      `API key missing required scope 'session_recording:read' (${action} a recording shows it to anyone with its link).`,
    );
  }
}

/**
 * Whether the caller may read the project's persons, which a recording embeds (`person`): their level on the
 * events and persons (`query`) is above `none` (docs/decisions.md §17, "A recording's person").
 */
function seesPersons(access: ProjectAccess): boolean {
  return access.resource('query').level !== 'none';
}

/** The recording as a caller sees it: without its person when they may not read persons. */
function asSeen(recording: SessionRecordingDto, persons: boolean): SessionRecordingDto {
  return persons ? recording : { ...recording, person: null };
}

/**
 * A caller who may not read the project's events and persons (`query` at `none`) may not filter recordings by
 * them either (the list would tell what they hold): 403 naming the parameter.
 */
function refusePersonFilters(filters: RecordingFilters): void {
  const { events, excludeEvents, personProperties } = filters.eventFilters ?? {};
  const used = [
    filters.personUuid !== undefined && 'person_uuid',
    !!personProperties?.length && 'properties',
    !!events?.length && 'events',
    !!excludeEvents?.length && 'exclude_events',
  ].filter((name): name is string => typeof name === 'string');
  if (used.length) {
    throw ApiError.permissionDenied(
      `'${used[0]}' filters by the project's events and persons, which you may not read (query: none).`,
    );
  }
}

@Injectable()
export class SessionRecordingsService {
  private readonly retentionDays: number;
  private readonly storage: RecordingStorageName;

  constructor(
    private readonly transactions: TransactionHost,
    private readonly recordings: SessionRecordingsRepository,
    private readonly sharings: RecordingSharingRepository,
    private readonly persons: PersonsService,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
    private readonly snapshotReader: SnapshotReader,
    private readonly expensiveReads: ExpensiveReads,
    private readonly visibility: RecordingVisibilityService,
    config: AppConfig,
  ) {
    this.retentionDays = config.get('RECORDING_RETENTION_DAYS');
    this.storage = config.get('RECORDING_STORAGE') === 's3' ? 'object_storage' : 'postgres';
  }

  async list(
    principal: Principal,
    projectId: number,
    query: RecordingListQueryDto,
    page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    const { project, access, visibility } = await this.enter(principal, projectId, 'viewer');
    const now = this.clock.now();
    const filters = parseRecordingFilters(query, now);
    if (!seesPersons(access)) refusePersonFilters(filters);
    filters.visibility = visibility;
    const nowMs = now.getTime();
    const days = this.retentionOf(project);
    const read = () =>
      this.recordings.list(project.id, principal.userId, filters, page, retentionCutoff(nowMs, days));
    // Filters on the session's events may scan much of the project's events: an expensive read, capped per key
    // and per organization (ExpensiveReads).
    const { events, excludeEvents } = filters.eventFilters ?? {};
    const { rows, total } =
      events?.length || excludeEvents?.length
        ? await this.expensiveReads.run(
            { keyId: principal.keyId, organizationId: project.organizationId },
            read,
          )
        : await read();
    const items = new Array<SessionRecordingDto>(rows.length);
    const persons = seesPersons(access);
    for (let i = 0; i < rows.length; i++) {
      items[i] = asSeen(toRecordingDto(rows[i], nowMs, days, this.storage), persons);
    }
    return { items, total };
  }

  /**
   * A page of the project's recordings among `sessionIds` (neither deleted nor expired, nor hidden from the user
   * by the access rules: `visibility`, what the user may watch), in the list's order, as the user sees them (the
   * recordings pinned to a playlist), without their persons unless the user may read the project's persons
   * (`access`: `query` above `none`). The project's access is the caller's check.
   */
  async listAmong(
    project: ProjectEntity,
    userId: number,
    { access, visibility }: { access: ProjectAccess; visibility: RecordingVisibility },
    sessionIds: readonly string[],
    page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    if (!sessionIds.length) return { items: [], total: 0 };
    const nowMs = this.clock.now().getTime();
    const days = this.retentionOf(project);
    const { rows, total } = await this.recordings.list(
      project.id,
      userId,
      { sessionIds, visibility },
      page,
      retentionCutoff(nowMs, days),
    );
    const persons = seesPersons(access);
    return { items: rows.map((r) => asSeen(toRecordingDto(r, nowMs, days, this.storage), persons)), total };
  }

  /**
   * Runs `work` in a transaction holding the project's recording `id` locked against deletion and the purge;
   * 404 when it does not exist, was deleted, has expired or is hidden by the access rules (`visibility`: what the
   * caller may watch). The project's access is the caller's check.
   */
  async withLiveRecording<T>(
    project: ProjectEntity,
    visibility: RecordingVisibility,
    id: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const cutoff = this.cutoff(this.retentionOf(project));
    return this.transactions.withTransaction(async () => {
      if (!(await this.recordings.lockLive(project.id, id, cutoff, visibility))) throw ApiError.notFound();
      return work();
    });
  }

  async retrieve(principal: Principal, projectId: number, id: string): Promise<SessionRecordingDto> {
    const { project, access, visibility } = await this.enter(principal, projectId, 'viewer');
    return asSeen(
      await this.requireRecording(project.id, id, principal.userId, this.retentionOf(project), visibility),
      seesPersons(access),
    );
  }

  async update(
    principal: Principal,
    projectId: number,
    id: string,
    body: UpdateSessionRecordingDto | ReplaceSessionRecordingDto,
  ): Promise<SessionRecordingDto> {
    const { project, access, visibility } = await this.enter(principal, projectId, 'editor');
    // Writing the person's properties writes the project's persons (`query`): not below its viewers' reach.
    if (body.person?.properties !== undefined && !seesPersons(access)) throw ApiError.notFound();
    // `analyzed` and `player_metadata` are PostHog's player telemetry: accepted (validated) and not stored.
    const days = this.retentionOf(project);
    await this.transactions.withTransaction(async () => {
      if (body.person?.properties !== undefined) {
        // The person is locked before the recording, the order capture takes them in (no deadlock with it).
        const current = await this.requireRecording(project.id, id, null, days, visibility);
        if (current.person === null) {
          throw ApiError.validation('This recording has no person to update.', 'person');
        }
        await this.persons.mergeProperties(
          project.id,
          current.person.id,
          body.person.properties,
          'person__properties',
        );
      }
      const recording = await this.recordings.lockLive(project.id, id, this.cutoff(days), visibility);
      if (!recording) throw ApiError.notFound();
      if (body.viewed !== undefined) {
        await this.recordings.setViewed(project.id, id, principal.userId, body.viewed, this.clock.now());
      }
    });
    return asSeen(
      await this.requireRecording(project.id, id, principal.userId, days, visibility),
      seesPersons(access),
    );
  }

  async delete(principal: Principal, projectId: number, id: string): Promise<void> {
    const { project, visibility } = await this.enter(principal, projectId, 'editor');
    // A recording hidden from the caller is not theirs to delete (404, as if it did not exist).
    if (visibility.restricted)
      await this.requireRecording(project.id, id, null, this.retentionOf(project), visibility);
    const now = this.clock.now();
    const cutoff = retentionCutoff(now.getTime(), this.retentionOf(project));
    if (!(await this.recordings.softDelete(project.id, id, now, cutoff))) {
      throw ApiError.notFound();
    }
  }

  /** The recording's snapshot sources, or the lines of one or a range of them (see `SnapshotReader`). */
  async snapshots(
    principal: Principal,
    projectId: number,
    id: string,
    query: SnapshotsQuery,
  ): Promise<StreamedBody> {
    const project = await this.enterRecording(principal, projectId, id, 'viewer');
    return this.snapshotReader.read(project.id, id, query);
  }

  // ---- sharing ----------------------------------------------------------------------------------------------

  async sharing(principal: Principal, projectId: number, id: string): Promise<SharingConfigurationDto> {
    const project = await this.enterRecording(principal, projectId, id, 'viewer');
    return toSharingDto(await this.findOrCreateSharing(project.id, id));
  }

  async updateSharing(
    principal: Principal,
    projectId: number,
    id: string,
    body: UpdateSharingDto,
  ): Promise<SharingConfigurationDto> {
    const project = await this.enterRecording(principal, projectId, id, 'editor', () => {
      if (body.enabled === true) requireRecordingRead(principal, 'publishing');
    });
    if (body.password_required === true) {
      throw ApiError.validation(
        'Password-protected sharing is not supported by this service; password_required can only be false.',
        'password_required',
      );
    }
    if (body.enabled === true) {
      const policies = await this.organizations.policies(project.organizationId);
      if (!policies) throw ApiError.notFound();
      if (!policies.allowPubliclySharedResources) {
        throw ApiError.permissionDenied('Public sharing is disabled for this organization.');
      }
    }
    await this.findOrCreateSharing(project.id, id);
    const row = await this.sharings.updateSharing(project.id, id, {
      enabled: body.enabled,
      settings: body.settings,
      // Enabling makes the caller the link's issuer: the link works while the rules let them watch it.
      enabledById: body.enabled === true ? principal.userId : undefined,
    });
    if (!row) throw ApiError.notFound();
    return toSharingDto(row);
  }

  async refreshSharing(
    principal: Principal,
    projectId: number,
    id: string,
  ): Promise<SharingConfigurationDto> {
    const project = await this.enterRecording(principal, projectId, id, 'editor', () =>
      requireRecordingRead(principal, 'issuing a new link to'),
    );
    await this.findOrCreateSharing(project.id, id);
    const row = await this.withFreshToken((accessToken) =>
      this.sharings.updateSharing(project.id, id, { accessToken, enabledById: principal.userId }),
    );
    if (!row) throw ApiError.notFound();
    return toSharingDto(row);
  }

  /**
   * The recording behind an enabled sharing token (no API key), without anything about its person; 404 for any
   * other token, and while the access rules hide the recording from the link's issuer.
   */
  async shared(accessToken: string): Promise<SharedSessionRecordingDto> {
    const shared = await this.requireShared(accessToken);
    return toSharedRecordingDto(
      await this.requireRecording(
        shared.teamId,
        shared.sessionId,
        null,
        shared.retentionDays,
        shared.visibility,
      ),
    );
  }

  /**
   * The session behind an enabled sharing token and its recording's time range, for reads of the session's
   * other data (its events) bound to the share; 404 for any other token.
   */
  async sharedSession(
    accessToken: string,
  ): Promise<{ teamId: number; sessionId: string; startTime: Date; endTime: Date }> {
    const shared = await this.requireShared(accessToken);
    const recording = await this.requireRecording(
      shared.teamId,
      shared.sessionId,
      null,
      shared.retentionDays,
      shared.visibility,
    );
    return {
      teamId: shared.teamId,
      sessionId: shared.sessionId,
      startTime: new Date(recording.start_time),
      endTime: new Date(recording.end_time),
    };
  }

  async sharedSnapshots(accessToken: string, query: SnapshotsQuery): Promise<StreamedBody> {
    const shared = await this.requireShared(accessToken);
    if (shared.visibility.restricted) {
      await this.requireRecording(
        shared.teamId,
        shared.sessionId,
        null,
        shared.retentionDays,
        shared.visibility,
      );
    }
    return this.snapshotReader.read(shared.teamId, shared.sessionId, query);
  }

  // ---- helpers ------------------------------------------------------------------------------------------------

  /**
   * Where every recordings route of a caller starts: the project, checked for `session_recording` at `need`
   * (`ProjectsService.requireResource`: 404, 403), and what the caller may watch of its recordings, in one
   * statement (`RecordingVisibilityService.enter`).
   */
  private enter(principal: Principal, projectId: number, need: 'viewer' | 'editor') {
    return this.visibility.enter(principal, projectId, 'session_recording', need);
  }

  /**
   * As `enter`, for a route about one recording: 404 when the recording does not exist, was deleted, has
   * expired, or the access rules hide it from the caller. `check` runs between the two (a refusal that only a
   * caller who may enter the project is told). The project.
   */
  private async enterRecording(
    principal: Principal,
    projectId: number,
    id: string,
    need: 'viewer' | 'editor',
    check?: () => void,
  ): Promise<ProjectEntity> {
    const { project, visibility } = await this.enter(principal, projectId, need);
    check?.();
    await this.requireRecording(project.id, id, null, this.retentionOf(project), visibility);
    return project;
  }

  /** Days the project's recordings are kept: its own setting, else RECORDING_RETENTION_DAYS. */
  private retentionOf(project: { sessionRecordingRetentionPeriodDays: number | null }): number {
    return project.sessionRecordingRetentionPeriodDays ?? this.retentionDays;
  }

  /** The earliest start a recording kept `days` may have now (older ones have expired: 404, not listed). */
  private cutoff(days: number): Date {
    return retentionCutoff(this.clock.now().getTime(), days);
  }

  /**
   * The recording as the API shows it; 404 when it does not exist, is deleted, has expired, or is hidden by the
   * access rules (`visibility`: what the caller may watch).
   */
  private async requireRecording(
    teamId: number,
    id: string,
    userId: number | null,
    retentionDays: number,
    visibility: RecordingVisibility = RecordingVisibility.EVERYTHING,
  ): Promise<SessionRecordingDto> {
    const nowMs = this.clock.now().getTime();
    const cutoff = retentionCutoff(nowMs, retentionDays);
    const row = await this.recordings.findOne(teamId, id, userId, cutoff, visibility);
    if (!row) throw ApiError.notFound();
    return toRecordingDto(row, nowMs, retentionDays, this.storage);
  }

  /**
   * The enabled sharing of a token, with what its issuer may watch of the project's recordings (the link shows
   * the recording while the access rules let its issuer watch it); 404 for any other token.
   */
  private async requireShared(accessToken: string) {
    const shared =
      accessToken.length <= 64 && ACCESS_TOKEN.test(accessToken)
        ? await this.sharings.findEnabledSharing(accessToken, this.clock.now(), this.retentionDays)
        : null;
    if (!shared) throw ApiError.notFound();
    return { ...shared, visibility: await this.visibility.visibilityFor(shared.teamId, shared.enabledById) };
  }

  private findOrCreateSharing(teamId: number, id: string) {
    return this.withFreshToken((token) =>
      this.sharings.findOrCreateSharing(teamId, id, token, this.clock.now()),
    );
  }

  /**
   * Runs `fn` with a new random token, again with another on the (astronomically unlikely) clash; each attempt in
   * a savepoint, so a clash inside the request's transaction aborts only that attempt.
   */
  private async withFreshToken<T>(fn: (token: string) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transactions.withSavepoint(() => fn(randomUrlSafe(ACCESS_TOKEN_LENGTH)));
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
      }
    }
  }
}
