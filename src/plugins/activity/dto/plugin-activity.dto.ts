import { ApiProperty } from '@nestjs/swagger';
import { ANY_JSON } from '../../../common/openapi/any-json.js';
import { toUserDto, UserDto } from '../../../users/dto/user.dto.js';
import type { UserEntity } from '../../../users/user.entity.js';
import { PLUGIN_ACTIVITIES, type PluginActivityEntity } from '../plugin-activity.entity.js';

/** One change of an activity entry, in PostHog's shape. */
export class ActivityChangeDto {
  @ApiProperty({ example: 'Plugin', description: 'What changed: always "Plugin" here.' })
  type: string;

  @ApiProperty({ enum: ['created', 'changed', 'deleted'] })
  action: string;

  @ApiProperty({
    example: 'tag',
    description: 'A field of the record, or `source/<filename>` for a source file.',
  })
  field: string;

  @ApiProperty({
    ...ANY_JSON,
    description:
      'The value before (null when created). For source files only their size: `{"bytes": n}` — file ' +
      'contents are never recorded.',
  })
  before: unknown;

  @ApiProperty({ ...ANY_JSON, description: 'The value after (null when deleted).' })
  after: unknown;
}

/** PostHog's `detail` of an activity entry. */
export class ActivityDetailDto {
  @ApiProperty({ type: [ActivityChangeDto] })
  changes: ActivityChangeDto[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: null,
    description: 'Always null here.',
  })
  merge: null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: null,
    description: 'Always null here.',
  })
  trigger: null;

  @ApiProperty({ example: 'Customer.io', description: "The record's name at the time." })
  name: string;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'Always null here.' })
  short_id: null;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'Always null here.' })
  type: null;
}

/** One entry of the change history of a category's records, in the shape of PostHog's activity log. */
export class PluginActivityDto {
  @ApiProperty({
    type: UserDto,
    nullable: true,
    description: 'Who acted (null when unknown); its e-mail as it was at the time.',
  })
  user: UserDto | null;

  @ApiProperty({ enum: PLUGIN_ACTIVITIES, example: 'updated' })
  activity: string;

  @ApiProperty({ example: 'Plugin', description: 'Always "Plugin".' })
  scope: string;

  @ApiProperty({ example: '7', description: 'The record id, as a string (the record may since be deleted).' })
  item_id: string;

  @ApiProperty({ type: ActivityDetailDto })
  detail: ActivityDetailDto;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

/** `users` holds the acting users that still exist, by id. */
export function toPluginActivityDto(
  entity: PluginActivityEntity,
  users: ReadonlyMap<number, UserEntity>,
): PluginActivityDto {
  const user = entity.userId === null ? undefined : users.get(entity.userId);
  return {
    user: user
      ? { ...toUserDto(user), email: entity.userEmail ?? user.email }
      : entity.userId === null
        ? null
        : {
            id: entity.userId,
            uuid: entity.userUuid ?? '',
            distinct_id: '',
            first_name: '',
            last_name: '',
            email: entity.userEmail ?? '',
            is_email_verified: false,
            hedgehog_config: null,
            is_service_account: false,
          },
    activity: entity.activity,
    scope: 'Plugin',
    item_id: String(entity.pluginId),
    detail: {
      changes: entity.changes.map((c) => ({
        type: 'Plugin',
        action: c.action,
        field: c.field,
        before: c.before,
        after: c.after,
      })),
      merge: null,
      trigger: null,
      name: entity.pluginName,
      short_id: null,
      type: null,
    },
    created_at: entity.createdAt.toISOString(),
  };
}
