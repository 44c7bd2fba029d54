import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../common/auth/principal.js';
import { randomUrlSafe } from '../common/crypto/tokens.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { PersonsService } from '../persons/persons.service.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { UpdateSessionRecordingDto } from './dto/session-recording-input.dto.js';
import { type SessionRecordingDto, type SnapshotsDto, toRecordingDto } from './dto/session-recording.dto.js';
import { type SharingConfigurationDto, toSharingDto, type UpdateSharingDto } from './dto/sharing.dto.js';
import { parseRecordingFilters } from './recording-filters.js';
import { type RrwebEvent, sortByTime } from './recording-metadata.js';
import { SESSION_ID_MAX_LENGTH } from './session-recording.entity.js';
import { SessionRecordingsRepository } from './session-recordings.repository.js';

const gunzipAsync = promisify(gunzip);
const SESSION_ID = /^[A-Za-z0-9-]+$/;
/** Length of sharing access tokens (32 random bytes, base64url). */
export const ACCESS_TOKEN_LENGTH = 43;

const isSessionId = (id: string) => id.length <= SESSION_ID_MAX_LENGTH && SESSION_ID.test(id);

/**
 * The recordings API of a project (decisions §10): list, retrieve, update (person properties, viewed), soft
 * delete, snapshots, and sharing. Every operation starts with `ProjectsService.requireAccessible` (404 for a
 * project of another organization, 403 for keys restricted to other projects).
 */
@Injectable()
export class SessionRecordingsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly recordings: SessionRecordingsRepository,
    private readonly projects: ProjectsService,
    private readonly persons: PersonsService,
    private readonly clock: Clock,
  ) {}

  async list(
    principal: Principal,
    projectId: string,
    query: Record<string, unknown>,
    page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    const project = await this.projects.requireAccessible(principal, projectId);
    const now = this.clock.now();
    const filters = parseRecordingFilters(query, now);
    const { rows, total } = await this.recordings.list(project.id, principal.userId, filters, page);
    const nowMs = now.getTime();
    const items = new Array<SessionRecordingDto>(rows.length);
    for (let i = 0; i < rows.length; i++) items[i] = toRecordingDto(rows[i], nowMs);
    return { items, total };
  }

  async retrieve(principal: Principal, projectId: string, id: string): Promise<SessionRecordingDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    return this.requireRecording(project.id, id, principal.userId);
  }

  async update(
    principal: Principal,
    projectId: string,
    id: string,
    body: UpdateSessionRecordingDto,
  ): Promise<SessionRecordingDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    if (!isSessionId(id)) throw ApiError.notFound();
    await this.dataSource.transaction(async (manager) => {
      const recording = await this.recordings.lockLive(manager, project.id, id);
      if (!recording) throw ApiError.notFound();
      if (body.person?.properties !== undefined) {
        if (recording.personId === null) {
          throw ApiError.validation('This recording has no person to update.', 'person');
        }
        await this.persons.mergeProperties(manager, recording.personId, body.person.properties);
      }
      if (body.viewed !== undefined) {
        await this.recordings.setViewed(
          manager,
          project.id,
          id,
          principal.userId,
          body.viewed,
          this.clock.now(),
        );
      }
    });
    return this.requireRecording(project.id, id, principal.userId);
  }

  async delete(principal: Principal, projectId: string, id: string): Promise<void> {
    const project = await this.projects.requireAccessible(principal, projectId);
    if (!isSessionId(id) || !(await this.recordings.softDelete(project.id, id, this.clock.now()))) {
      throw ApiError.notFound();
    }
  }

  async snapshots(principal: Principal, projectId: string, id: string): Promise<SnapshotsDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    await this.requireRecording(project.id, id, null);
    return this.readSnapshots(project.id, id);
  }

  // ---- sharing ----------------------------------------------------------------------------------------------

  async sharing(principal: Principal, projectId: string, id: string): Promise<SharingConfigurationDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    await this.requireRecording(project.id, id, null);
    return toSharingDto(await this.findOrCreateSharing(project.id, id));
  }

  async updateSharing(
    principal: Principal,
    projectId: string,
    id: string,
    body: UpdateSharingDto,
  ): Promise<SharingConfigurationDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    await this.requireRecording(project.id, id, null);
    await this.findOrCreateSharing(project.id, id);
    const row = await this.recordings.updateSharing(project.id, id, { enabled: body.enabled });
    if (!row) throw ApiError.notFound();
    return toSharingDto(row);
  }

  async refreshSharing(
    principal: Principal,
    projectId: string,
    id: string,
  ): Promise<SharingConfigurationDto> {
    const project = await this.projects.requireAccessible(principal, projectId);
    await this.requireRecording(project.id, id, null);
    await this.findOrCreateSharing(project.id, id);
    const row = await this.withFreshToken((accessToken) =>
      this.recordings.updateSharing(project.id, id, { accessToken }),
    );
    if (!row) throw ApiError.notFound();
    return toSharingDto(row);
  }

  /** The recording behind an enabled sharing token (no API key); 404 for any other token. */
  async shared(accessToken: string): Promise<SessionRecordingDto> {
    const shared = await this.requireShared(accessToken);
    return this.requireRecording(shared.team_id, shared.session_id, null);
  }

  async sharedSnapshots(accessToken: string): Promise<SnapshotsDto> {
    const shared = await this.requireShared(accessToken);
    return this.readSnapshots(shared.team_id, shared.session_id);
  }

  // ---- helpers ------------------------------------------------------------------------------------------------

  private async requireRecording(
    teamId: number,
    id: string,
    userId: number | null,
  ): Promise<SessionRecordingDto> {
    const row = isSessionId(id) ? await this.recordings.findOne(teamId, id, userId) : null;
    if (!row) throw ApiError.notFound();
    return toRecordingDto(row, this.clock.now().getTime());
  }

  private async requireShared(accessToken: string) {
    const shared = accessToken.length <= 64 ? await this.recordings.findEnabledSharing(accessToken) : null;
    if (!shared) throw ApiError.notFound();
    return shared;
  }

  private findOrCreateSharing(teamId: number, id: string) {
    return this.withFreshToken((token) =>
      this.recordings.findOrCreateSharing(teamId, id, token, this.clock.now()),
    );
  }

  /** Runs `fn` with a new random token, again with another on the (astronomically unlikely) clash. */
  private async withFreshToken<T>(fn: (token: string) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(randomUrlSafe(ACCESS_TOKEN_LENGTH));
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
      }
    }
  }

  private async readSnapshots(teamId: number, id: string): Promise<SnapshotsDto> {
    const chunks = await this.recordings.snapshotChunks(teamId, id);
    const all: { window_id: string; event: RrwebEvent; timestamp: number }[] = [];
    for (const chunk of chunks) {
      const events = JSON.parse((await gunzipAsync(chunk.data)).toString('utf8')) as RrwebEvent[];
      for (const event of events) all.push({ window_id: chunk.window_id, event, timestamp: event.timestamp });
    }
    return { snapshots: sortByTime(all).map(({ window_id, event }) => ({ window_id, event })) };
  }
}
