import { ApiProperty } from '@nestjs/swagger';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { SessionRecordingPlaylistEntity } from '../session-recording-playlist.entity.js';

/** The kinds of playlist PostHog has: pinned recordings (`collection`) or saved filters (`filters`). */
export const PLAYLIST_TYPES = ['collection', 'filters'] as const;
export type PlaylistType = (typeof PLAYLIST_TYPES)[number];

/** A playlist's type: `filters` when it has saved filters, else `collection`. */
export const playlistTypeOf = (filters: Record<string, unknown>): PlaylistType =>
  Object.keys(filters).length > 0 ? 'filters' : 'collection';

/** PostHog's counts of the recordings matching a playlist's saved filters: none are computed here. */
export class PlaylistSavedFiltersCountsDto {
  @ApiProperty({ type: 'integer', nullable: true, example: null, description: 'Always null (not computed).' })
  count: number | null;
  @ApiProperty({ type: Boolean, nullable: true, example: null, description: 'Always null (not computed).' })
  has_more: boolean | null;
  @ApiProperty({ type: 'integer', nullable: true, example: null, description: 'Always null (not computed).' })
  watched_count: number | null;
  @ApiProperty({ type: Boolean, nullable: true, example: null, description: 'Always null (not computed).' })
  increased: boolean | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
    description: 'Always null (not computed).',
  })
  last_refreshed_at: string | null;
}

/** The recordings pinned to a playlist, counted. */
export class PlaylistCollectionCountsDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 2,
    description: 'How many recordings are pinned (null when none is, as PostHog answers).',
  })
  count: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1,
    description: 'How many of them the caller has viewed (`viewed` of the recording).',
  })
  watched_count: number | null;
}

/** PostHog's `recordings_counts` of a playlist. */
export class PlaylistRecordingsCountsDto {
  @ApiProperty({ type: PlaylistSavedFiltersCountsDto }) saved_filters: PlaylistSavedFiltersCountsDto;
  @ApiProperty({ type: PlaylistCollectionCountsDto }) collection: PlaylistCollectionCountsDto;
}

/** A playlist's pinned recordings, and how many of them a user has viewed. */
export interface PinnedCounts {
  pinned: number;
  watched: number;
}

/** A saved view of a project's recordings, in PostHog's session recording playlist shape. */
export class PlaylistDto {
  @ApiProperty({ type: 'integer' }) id: number;

  @ApiProperty({ example: 'a1B2c3D4', description: 'What the playlist is addressed by in paths.' })
  short_id: string;

  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: String, nullable: true }) derived_name: string | null;
  @ApiProperty() description: string;
  @ApiProperty() pinned: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  @ApiProperty({ type: UserDto, nullable: true, description: 'Null once that user is gone.' })
  created_by: UserDto | null;

  @ApiProperty({ description: 'Always false: deleted playlists are not returned.' })
  deleted: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true }) filters: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) last_modified_at: string;

  @ApiProperty({ type: UserDto, nullable: true, description: 'Null once that user is gone.' })
  last_modified_by: UserDto | null;

  @ApiProperty({
    enum: PLAYLIST_TYPES,
    example: 'collection',
    description:
      '`filters` when the playlist has saved `filters`, else `collection` (its pinned recordings), as PostHog ' +
      'types them.',
  })
  type: PlaylistType;

  @ApiProperty({
    example: false,
    description: "Always false: no synthetic (computed) playlists here (PostHog's built-in ones).",
  })
  is_synthetic: boolean;

  @ApiProperty({ type: PlaylistRecordingsCountsDto })
  recordings_counts: PlaylistRecordingsCountsDto;
}

/**
 * The playlist must have `createdBy` and `lastModifiedBy` loaded (null when the user is gone); `counts` are its
 * pinned recordings and how many of them the caller has viewed.
 */
export function toPlaylistDto(p: SessionRecordingPlaylistEntity, counts: PinnedCounts): PlaylistDto {
  return {
    id: p.id,
    short_id: p.shortId,
    name: p.name,
    derived_name: p.derivedName,
    description: p.description,
    pinned: p.pinned,
    created_at: p.createdAt.toISOString(),
    created_by: p.createdBy ? toUserDto(p.createdBy) : null,
    deleted: p.deleted,
    filters: p.filters,
    last_modified_at: p.lastModifiedAt.toISOString(),
    last_modified_by: p.lastModifiedBy ? toUserDto(p.lastModifiedBy) : null,
    type: playlistTypeOf(p.filters),
    is_synthetic: false,
    recordings_counts: {
      saved_filters: {
        count: null,
        has_more: null,
        watched_count: null,
        increased: null,
        last_refreshed_at: null,
      },
      collection: { count: counts.pinned > 0 ? counts.pinned : null, watched_count: counts.watched },
    },
  };
}

/** PostHog's answer to pinning and unpinning a recording. */
export class PinResultDto {
  @ApiProperty({ example: true }) success: boolean;
}
