import { ApiProperty } from '@nestjs/swagger';
import { toUserDto, UserDto } from '../../users/dto/user.dto.js';
import type { SessionRecordingPlaylistEntity } from '../session-recording-playlist.entity.js';

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
}

/** The playlist must have `createdBy` and `lastModifiedBy` loaded (null when the user is gone). */
export function toPlaylistDto(p: SessionRecordingPlaylistEntity): PlaylistDto {
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
  };
}

/** PostHog's answer to pinning and unpinning a recording. */
export class PinResultDto {
  @ApiProperty({ example: true }) success: boolean;
}
