import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  PLAYLIST_FILTERS_MAX_BYTES,
  PLAYLIST_NAME_MAX_LENGTH,
  filtersWithinLimit,
} from '../playlist-rules.js';
import { PLAYLIST_TYPES, type PlaylistType } from './playlist.dto.js';

/**
 * Fields of a playlist that clients read but never write, and PostHog's `_create_in_folder` (a folder of
 * PostHog's file system; there are none here): ignored when sent.
 */
const READ_ONLY = [
  'id',
  'short_id',
  'created_at',
  'created_by',
  'last_modified_at',
  'last_modified_by',
  'recordings_counts',
  'is_synthetic',
  '_create_in_folder',
];

const NAME_LENGTH = `Ensure this field has no more than ${PLAYLIST_NAME_MAX_LENGTH} characters.`;
const DESCRIPTION_MAX_LENGTH = 10_000;

/**
 * The writable fields of a playlist (PostHog's session recording playlist), as PATCH and PUT take them: every
 * field may be left out; `type` is read-only (it follows from `filters`).
 */
@ReadOnlyFields(...READ_ONLY, 'type')
export class PlaylistInputDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: PLAYLIST_NAME_MAX_LENGTH })
  @IsOptional()
  @MaxLength(PLAYLIST_NAME_MAX_LENGTH, { message: NAME_LENGTH })
  @IsString({ message: 'Must be a string.' })
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: PLAYLIST_NAME_MAX_LENGTH,
    description: 'A name made from the filters, shown when `name` is empty (clients compute it).',
  })
  @IsOptional()
  @MaxLength(PLAYLIST_NAME_MAX_LENGTH, { message: NAME_LENGTH })
  @IsString({ message: 'Must be a string.' })
  derived_name?: string | null;

  @ApiPropertyOptional({ maxLength: DESCRIPTION_MAX_LENGTH })
  @IsOmittable()
  @MaxLength(DESCRIPTION_MAX_LENGTH, {
    message: `Ensure this field has no more than ${DESCRIPTION_MAX_LENGTH} characters.`,
  })
  @IsString({ message: 'Must be a string.' })
  description?: string;

  @ApiPropertyOptional({ description: 'Shown first in lists that sort pinned playlists first.' })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a valid boolean.' })
  pinned?: boolean;

  @ApiPropertyOptional({
    description: 'True deletes the playlist (soft, as in PostHog): it is gone from the API from then on.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a valid boolean.' })
  deleted?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'The recordings list filters the playlist applies, a JSON object stored as sent (at most ' +
      `${PLAYLIST_FILTERS_MAX_BYTES} bytes as JSON). The replay page saves and applies the list's query ` +
      'parameters under their names (`date_from`, `date_to`, `having_predicates`, `console_log_filters`, ' +
      '`person_uuid`, `distinct_id`); other keys are kept and returned as they are.',
  })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  @ValidateBy({
    name: 'filtersSize',
    validator: {
      validate: (value: unknown) => filtersWithinLimit(value),
      defaultMessage: () => `Must be at most ${PLAYLIST_FILTERS_MAX_BYTES} bytes as JSON.`,
    },
  })
  filters?: Record<string, unknown>;
}

/**
 * The body of a new playlist: the writable fields and PostHog's `type`, which may be left out (then it follows
 * from `filters`); given, it must agree with them, as PostHog checks.
 */
@ReadOnlyFields(...READ_ONLY)
export class CreatePlaylistDto extends PlaylistInputDto {
  @ApiPropertyOptional({
    enum: PLAYLIST_TYPES,
    description:
      '`collection` (pinned recordings: no `filters`) or `filters` (saved filters: `filters` must not be empty).',
  })
  @IsOmittable()
  @IsIn(PLAYLIST_TYPES, { message: 'Must be "collection" or "filters".' })
  type?: PlaylistType;
}
