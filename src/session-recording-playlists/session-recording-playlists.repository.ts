import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import type { ObjectListFilter } from '../memberships/memberships.service.js';
import { RepositoryBase } from '../database/repository-base.js';
import { RecordingVisibility } from '../recording-access-rules/recording-visibility.service.js';
import type { PinnedCounts } from './dto/playlist.dto.js';
import {
  SessionRecordingPlaylistEntity,
  SessionRecordingPlaylistItemEntity,
} from './session-recording-playlist.entity.js';

/** The writable columns of a playlist. */
export interface PlaylistFields {
  name?: string | null;
  derivedName?: string | null;
  description?: string;
  pinned?: boolean;
  deleted?: boolean;
  filters?: Record<string, unknown>;
}

/** Filters of the playlists list. */
export interface PlaylistListFilters {
  pinned?: boolean;
  createdById?: number;
  /** A case-insensitive substring of the name or derived name. */
  search?: string;
  /** `filters`: those with saved filters; `collection`: those without. */
  type?: 'collection' | 'filters';
}

const RELATIONS = { createdBy: true, lastModifiedBy: true } as const;

/** The playlists of a project and the recordings pinned to them. */
@Injectable()
export class SessionRecordingPlaylistsRepository extends RepositoryBase {
  /** A page of the project's playlists that are not deleted, last modified first, then by id. */
  async page(
    teamId: number,
    filters: PlaylistListFilters,
    { limit, offset }: PageParams,
    visible: ObjectListFilter | null = null,
  ): Promise<Page<SessionRecordingPlaylistEntity>> {
    const qb = this.repository(SessionRecordingPlaylistEntity)
      .createQueryBuilder('p')
      .leftJoinAndSelect('p.createdBy', 'created_by')
      .leftJoinAndSelect('p.lastModifiedBy', 'last_modified_by')
      .where('p.teamId = :teamId AND p.deleted = false', { teamId });
    if (visible) {
      // Access rules: the user's own playlists, and those the rules leave them.
      const ids = (list: string[]) => list.map(Number).filter(Number.isSafeInteger);
      qb.andWhere(
        visible.only
          ? '(p.createdById = :creator OR p.id = ANY(CAST(:only AS integer[])))'
          : '(p.createdById = :creator OR p.id <> ALL(CAST(:except AS integer[])))',
        { creator: visible.creatorId, only: ids(visible.only ?? []), except: ids(visible.except) },
      );
    }
    if (filters.pinned !== undefined) qb.andWhere('p.pinned = :pinned', { pinned: filters.pinned });
    if (filters.createdById !== undefined) {
      qb.andWhere('p.createdById = :createdById', { createdById: filters.createdById });
    }
    if (filters.type !== undefined) {
      qb.andWhere(filters.type === 'filters' ? "p.filters <> '{}'::jsonb" : "p.filters = '{}'::jsonb");
    }
    if (filters.search) {
      const pattern = `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      qb.andWhere('(p.name ILIKE :pattern OR p.derivedName ILIKE :pattern)', { pattern });
    }
    const [items, total] = await qb
      .orderBy('p.lastModifiedAt', 'DESC')
      .addOrderBy('p.id', 'ASC')
      .take(limit)
      .skip(offset)
      .getManyAndCount();
    return { items, total };
  }

  /** The project's playlist by short id, unless deleted, with its users. */
  findByShortId(teamId: number, shortId: string): Promise<SessionRecordingPlaylistEntity | null> {
    return this.repository(SessionRecordingPlaylistEntity).findOne({
      where: { teamId, shortId, deleted: false },
      relations: RELATIONS,
    });
  }

  /** A playlist by id, deleted or not, with its users. */
  findById(id: number): Promise<SessionRecordingPlaylistEntity | null> {
    return this.repository(SessionRecordingPlaylistEntity).findOne({ where: { id }, relations: RELATIONS });
  }

  /** As findByShortId, without the users, locked for update until the caller's transaction ends. */
  lockByShortId(teamId: number, shortId: string): Promise<SessionRecordingPlaylistEntity | null> {
    return this.repository(SessionRecordingPlaylistEntity).findOne({
      where: { teamId, shortId, deleted: false },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Inserts a playlist; a short id already taken in the project fails on PLAYLIST_SHORT_ID_CONSTRAINT. */
  async insert(
    fields: PlaylistFields & {
      teamId: number;
      shortId: string;
      createdById: number;
      createdAt: Date;
      lastModifiedById: number;
      lastModifiedAt: Date;
    },
  ): Promise<void> {
    const repo = this.repository(SessionRecordingPlaylistEntity);
    await repo.save(repo.create(fields), { transaction: false, reload: false });
  }

  async update(
    id: number,
    fields: PlaylistFields & { lastModifiedById: number; lastModifiedAt: Date },
  ): Promise<void> {
    const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    await this.repository(SessionRecordingPlaylistEntity).update({ id }, set);
  }

  /** The session ids pinned to the playlist, most recently pinned first (at most `limit`). */
  async pinnedSessionIds(playlistId: number, limit: number): Promise<string[]> {
    const rows = await this.repository(SessionRecordingPlaylistItemEntity).find({
      select: { sessionId: true },
      where: { playlistId },
      order: { addedAt: 'DESC', sessionId: 'ASC' },
      take: limit,
    });
    return rows.map((r) => r.sessionId);
  }

  /**
   * For each of these playlists, its pinned recordings and how many of them the user has viewed (one query;
   * a playlist with none is absent from the map). Recordings the access rules hide from the user
   * (`visibility`) are not counted.
   */
  async pinnedCounts(
    playlistIds: readonly number[],
    userId: number,
    visibility: RecordingVisibility = RecordingVisibility.EVERYTHING,
  ): Promise<Map<number, PinnedCounts>> {
    if (!playlistIds.length) return new Map();
    const params: unknown[] = [playlistIds, userId];
    const hidden = visibility.hiddenSessionSql('i.team_id', 'i.session_id', (v) => `$${params.push(v)}`);
    const rows = await this.query<{ playlistId: number; pinned: number; watched: number }>(
      `SELECT i.playlist_id AS "playlistId", count(*)::int AS pinned, count(v.user_id)::int AS watched
         FROM session_recording_playlist_items i
         LEFT JOIN session_recording_views v
           ON v.team_id = i.team_id AND v.session_id = i.session_id AND v.user_id = $2
        WHERE i.playlist_id = ANY($1::int[])${hidden ? ` AND NOT ${hidden}` : ''}
        GROUP BY i.playlist_id`,
      params,
    );
    return new Map(rows.map((r) => [r.playlistId, { pinned: r.pinned, watched: r.watched }]));
  }

  countPinned(playlistId: number): Promise<number> {
    return this.repository(SessionRecordingPlaylistItemEntity).count({ where: { playlistId } });
  }

  /** Pins a recording; false when it was already pinned. */
  async pin(playlistId: number, teamId: number, sessionId: string, addedAt: Date): Promise<boolean> {
    const result = await this.repository(SessionRecordingPlaylistItemEntity)
      .createQueryBuilder()
      .insert()
      .values({ playlistId, teamId, sessionId, addedAt })
      .orIgnore()
      .returning('session_id')
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  /** Unpins a recording; false when it was not pinned. */
  async unpin(playlistId: number, sessionId: string): Promise<boolean> {
    const result = await this.repository(SessionRecordingPlaylistItemEntity).delete({
      playlistId,
      sessionId,
    });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes at most `limit` playlists of a (deleted) project, soft-deleted ones too, with their pinned recordings;
   * how many.
   */
  async deleteOfProject(teamId: number, limit: number): Promise<number> {
    const [, affected] = (await this.manager.query(
      `DELETE FROM session_recording_playlists WHERE id IN (
         SELECT id FROM session_recording_playlists WHERE team_id = $1 LIMIT $2)`,
      [teamId, limit],
    )) as [unknown[], number];
    return affected;
  }
}
