import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { Clock } from '../common/time/clock.js';
import { TransactionHost } from '../database/transactions.js';
import type { AccessControlObject } from '../access-controls/access-controls.service.js';
import type { ProjectAccess } from '../memberships/memberships.service.js';
import {
  type RecordingsEntry,
  type RecordingVisibility,
  RecordingVisibilityService,
} from '../recording-access-rules/recording-visibility.service.js';
import type { SessionRecordingDto } from '../session-recordings/reads/dto/session-recording.dto.js';
import { SessionRecordingsService } from '../session-recordings/reads/session-recordings.service.js';
import type { CreatePlaylistDto, PlaylistInputDto } from './dto/playlist-input.dto.js';
import { type PinnedCounts, type PlaylistDto, playlistTypeOf, toPlaylistDto } from './dto/playlist.dto.js';
import type { SessionRecordingPlaylistEntity } from './session-recording-playlist.entity.js';
import { isShortId, newShortId, PLAYLIST_MAX_PINS } from './playlist-rules.js';
import { PLAYLIST_SHORT_ID_CONSTRAINT } from './session-recording-playlist.entity.js';
import {
  type PlaylistFields,
  type PlaylistListFilters,
  SessionRecordingPlaylistsRepository,
} from './session-recording-playlists.repository.js';

const NO_PINS: PinnedCounts = { pinned: 0, watched: 0 };

/** The kind of object of a playlist's access rules (PostHog's `session_recording_playlist`). */
const PLAYLIST = 'session_recording_playlist';

/** Attempts at a free short id before giving up (a collision of 62^8 ids is already unlikely). */
const SHORT_ID_ATTEMPTS = 5;

/** Saved views of a project's recordings (docs/decisions.md §12). */
@Injectable()
export class SessionRecordingPlaylistsService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly playlists: SessionRecordingPlaylistsRepository,
    private readonly recordings: SessionRecordingsService,
    private readonly visibility: RecordingVisibilityService,
    private readonly clock: Clock,
  ) {}

  async list(
    principal: Principal,
    projectId: number,
    filters: PlaylistListFilters,
    page: PageParams,
  ): Promise<Page<PlaylistDto>> {
    const { project, access, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    const { items, total } = await this.playlists.page(
      project.id,
      filters,
      page,
      access.objectListFilter(PLAYLIST),
    );
    const counts = await this.playlists.pinnedCounts(
      items.map((p) => p.id),
      principal.userId,
      visibility,
    );
    return { items: items.map((p) => toPlaylistDto(p, counts.get(p.id) ?? NO_PINS)), total };
  }

  async create(principal: Principal, projectId: number, body: CreatePlaylistDto): Promise<PlaylistDto> {
    const { project, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'editor',
    );
    if (body.type !== undefined && body.type !== playlistTypeOf(body.filters ?? {})) {
      // PostHog's rules: a collection has no filters, saved filters have some.
      throw ApiError.validation(
        body.type === 'collection'
          ? 'A collection cannot have filters: leave them out, or create type "filters".'
          : 'A playlist of type "filters" needs non-empty filters.',
        'filters',
      );
    }
    const now = this.clock.now();
    for (let attempt = 1; ; attempt++) {
      const shortId = newShortId();
      try {
        // In a savepoint: a clash aborts only it, so the next attempt can run in the request's transaction.
        await this.transactions.withSavepoint(() =>
          this.playlists.insert({
            ...fieldsOf(body),
            deleted: false,
            teamId: project.id,
            shortId,
            createdById: principal.userId,
            createdAt: now,
            lastModifiedById: principal.userId,
            lastModifiedAt: now,
          }),
        );
      } catch (error) {
        if (attempt < SHORT_ID_ATTEMPTS && isUniqueViolation(error, PLAYLIST_SHORT_ID_CONSTRAINT)) continue;
        throw error;
      }
      return this.require(project.id, shortId, principal.userId, null, visibility);
    }
  }

  async retrieve(principal: Principal, projectId: number, shortId: string): Promise<PlaylistDto> {
    const { project, access, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    return this.require(project.id, shortId, principal.userId, access, visibility);
  }

  /**
   * The playlist and what the caller may do with it, for its access controls
   * (`…/session_recording_playlists/:short_id/access_controls`): 404 as retrieve.
   */
  async accessControlObject(
    principal: Principal,
    projectId: number,
    shortId: string,
  ): Promise<AccessControlObject> {
    const { project, access } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    const playlist = isShortId(shortId) ? await this.playlists.findByShortId(project.id, shortId) : null;
    if (!playlist) throw ApiError.notFound();
    const id = String(playlist.id);
    access.requireObject(PLAYLIST, id, playlist.createdById, 'viewer');
    return { project, access, kind: PLAYLIST, id, createdById: playlist.createdById };
  }

  /** Changes the fields sent; `deleted: true` deletes the playlist (the answer is its last state). */
  async update(
    principal: Principal,
    projectId: number,
    shortId: string,
    body: PlaylistInputDto,
  ): Promise<PlaylistDto> {
    return this.writeLocked(principal, projectId, shortId, async ({ visibility }, playlist) => {
      await this.playlists.update(playlist.id, {
        ...fieldsOf(body),
        lastModifiedById: principal.userId,
        lastModifiedAt: this.clock.now(),
      });
      const updated = await this.playlists.findById(playlist.id);
      if (!updated) throw ApiError.notFound();
      return this.toDto(updated, principal.userId, visibility);
    });
  }

  async delete(principal: Principal, projectId: number, shortId: string): Promise<void> {
    await this.writeLocked(principal, projectId, shortId, async (_entry, playlist) => {
      await this.playlists.update(playlist.id, {
        deleted: true,
        lastModifiedById: principal.userId,
        lastModifiedAt: this.clock.now(),
      });
    });
  }

  /** The pinned recordings that still exist (neither deleted nor expired), in the recordings list's order. */
  async pinnedRecordings(
    principal: Principal,
    projectId: number,
    shortId: string,
    page: PageParams,
  ): Promise<Page<SessionRecordingDto>> {
    const { project, access, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    const playlist = await this.playlists.findByShortId(project.id, shortId);
    if (!playlist) throw ApiError.notFound();
    access.requireObject(PLAYLIST, String(playlist.id), playlist.createdById, 'viewer');
    const sessionIds = await this.playlists.pinnedSessionIds(playlist.id, PLAYLIST_MAX_PINS);
    return this.recordings.listAmong(project, principal.userId, { access, visibility }, sessionIds, page);
  }

  /**
   * Pins a recording of the project (404 when it does not exist, was deleted or has expired); pinning one
   * already pinned changes nothing. At most PLAYLIST_MAX_PINS per playlist.
   */
  async pin(principal: Principal, projectId: number, shortId: string, sessionId: string): Promise<void> {
    const { project, access, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    if (!isShortId(shortId)) throw ApiError.notFound();
    await this.recordings.withLiveRecording(project, visibility, sessionId, async () => {
      const playlist = await this.playlists.lockByShortId(project.id, shortId);
      if (!playlist) throw ApiError.notFound();
      access.requireObject(PLAYLIST, String(playlist.id), playlist.createdById, 'editor');
      if ((await this.playlists.countPinned(playlist.id)) >= PLAYLIST_MAX_PINS) {
        // Counted under the playlist's lock: concurrent pins cannot pass the limit together.
        const pinned = await this.playlists.pinnedSessionIds(playlist.id, PLAYLIST_MAX_PINS);
        if (pinned.includes(sessionId)) return;
        throw ApiError.validation(
          `A playlist holds at most ${PLAYLIST_MAX_PINS} pinned recordings; unpin one first.`,
          'session_recording_id',
          'max_pinned',
        );
      }
      await this.playlists.pin(playlist.id, project.id, sessionId, this.clock.now());
    });
  }

  /**
   * Unpins a recording (a deleted or expired one too); 404 when it is not pinned, or when the access rules hide
   * it from the caller (to whom it does not exist).
   */
  async unpin(principal: Principal, projectId: number, shortId: string, sessionId: string): Promise<void> {
    await this.writeLocked(principal, projectId, shortId, async ({ project, visibility }, playlist) => {
      if (await this.visibility.hidesSession(project.id, visibility, sessionId)) throw ApiError.notFound();
      if (!(await this.playlists.unpin(playlist.id, sessionId))) throw ApiError.notFound();
    });
  }

  /** The load-for-write helper: access, a transaction, the playlist locked (404 when missing), then `work`. */
  private async writeLocked<T>(
    principal: Principal,
    projectId: number,
    shortId: string,
    work: (entry: RecordingsEntry, playlist: PlaylistRow) => Promise<T>,
  ): Promise<T> {
    const { project, access, visibility } = await this.visibility.enter(
      principal,
      projectId,
      'session_recording',
      'viewer',
    );
    if (!isShortId(shortId)) throw ApiError.notFound();
    return this.transactions.withTransaction(async () => {
      const playlist = await this.playlists.lockByShortId(project.id, shortId);
      if (!playlist) throw ApiError.notFound();
      // A playlist the caller may not see is not found; one they may only view is not theirs to change.
      access.requireObject(PLAYLIST, String(playlist.id), playlist.createdById, 'editor');
      return work({ project, access, visibility }, playlist);
    });
  }

  /** The playlist as the user sees it; 404 when it does not exist, or (with `access`) the user may not see it. */
  private async require(
    teamId: number,
    shortId: string,
    userId: number,
    access: ProjectAccess | null,
    visibility: RecordingVisibility,
  ): Promise<PlaylistDto> {
    const playlist = isShortId(shortId) ? await this.playlists.findByShortId(teamId, shortId) : null;
    if (!playlist) throw ApiError.notFound();
    access?.requireObject(PLAYLIST, String(playlist.id), playlist.createdById, 'viewer');
    return this.toDto(playlist, userId, visibility);
  }

  /**
   * The playlist as answered to the user (its pinned recordings counted, but for those the access rules hide
   * from the user, and those the user viewed).
   */
  private async toDto(
    playlist: SessionRecordingPlaylistEntity,
    userId: number,
    visibility: RecordingVisibility,
  ): Promise<PlaylistDto> {
    const counts = await this.playlists.pinnedCounts([playlist.id], userId, visibility);
    return toPlaylistDto(playlist, counts.get(playlist.id) ?? NO_PINS);
  }
}

type PlaylistRow = NonNullable<Awaited<ReturnType<SessionRecordingPlaylistsRepository['lockByShortId']>>>;

/** The body's fields as columns; fields left out stay undefined (unchanged). */
function fieldsOf(body: PlaylistInputDto): PlaylistFields {
  return {
    name: body.name,
    derivedName: body.derived_name,
    description: body.description,
    pinned: body.pinned,
    deleted: body.deleted,
    filters: body.filters,
  };
}
