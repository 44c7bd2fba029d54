import { ApiProperty } from '@nestjs/swagger';
import { PLUGIN_ACTIVITIES, type PluginActivityEntity } from '../plugin-activity.entity.js';

export class ActivityUserDto {
  @ApiProperty({ type: Number, nullable: true, example: 3 })
  id: number | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  uuid: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'ada@example.com', description: 'As it was then.' })
  email: string | null;
}

export class PluginChangeDto {
  @ApiProperty({
    example: 'tag',
    description: 'A field of the record, or `source/<filename>` for a source file.',
  })
  field: string;

  @ApiProperty({ enum: ['created', 'changed', 'deleted'] })
  action: string;

  @ApiProperty({
    nullable: true,
    description:
      'The value before (null when created). For source files only their size: `{"bytes": n}` — file ' +
      'contents are never recorded.',
  })
  before: unknown;

  @ApiProperty({ nullable: true, description: 'The value after (null when deleted).' })
  after: unknown;
}

/** One entry of the change history of a category's records. */
export class PluginActivityDto {
  @ApiProperty({ example: 12, description: 'Grows with insertion.' })
  id: number;

  @ApiProperty({ enum: PLUGIN_ACTIVITIES, example: 'updated' })
  activity: string;

  @ApiProperty({ example: 7, description: 'The record (which may since have been deleted).' })
  plugin_id: number;

  @ApiProperty({ example: 'Customer.io', description: "The record's name at the time." })
  plugin_name: string;

  @ApiProperty({ type: ActivityUserDto })
  user: ActivityUserDto;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: [PluginChangeDto] })
  changes: PluginChangeDto[];
}

export function toPluginActivityDto(entity: PluginActivityEntity): PluginActivityDto {
  return {
    id: Number(entity.id),
    activity: entity.activity,
    plugin_id: entity.pluginId,
    plugin_name: entity.pluginName,
    user: { id: entity.userId, uuid: entity.userUuid, email: entity.userEmail },
    created_at: entity.createdAt.toISOString(),
    changes: entity.changes,
  };
}
