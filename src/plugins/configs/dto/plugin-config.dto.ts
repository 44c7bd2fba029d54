import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { IsOmittable } from '../../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../../common/validation/read-only-fields.decorator.js';
import type { JsonObject } from '../../rules/plugin-rules.js';
import { PluginDto } from '../../records/dto/plugin.dto.js';

/** Shown instead of the value of a config key the plugin's schema marks `secret` (PostHog's string). */
export const SECRET_MASK = '**************** POSTHOG SECRET FIELD ****************';

/** A plugin enabled (or not) in a project. */
export class PluginConfigDto {
  @ApiProperty({ type: 'integer', example: 4 })
  id: number;

  @ApiProperty({ type: 'integer', example: 7, description: 'The plugin record.' })
  plugin: number;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({
    type: 'integer',
    example: 0,
    description: 'Position among the project’s configs (lists sort by it).',
  })
  order: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: `The settings. Keys the plugin's config_schema marks \`secret\` read "${SECRET_MASK}".`,
  })
  config: JsonObject;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at: string;

  @ApiProperty({ type: 'integer', example: 1, description: 'The project.' })
  team_id: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Customer.io (EU)',
    description: "Its own name if set, else the plugin's name.",
  })
  name: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "Its own description if set, else the plugin's description.",
  })
  description: string | null;

  @ApiProperty({
    type: PluginDto,
    nullable: true,
    description: 'The plugin record, on a single config (retrieve, create, update); null in lists.',
  })
  plugin_info: PluginDto | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: null,
    description:
      'Always null: no plugin runs here, so none has failed (PostHog no longer reports it either).',
  })
  error: null;

  @ApiProperty({
    type: 'number',
    nullable: true,
    example: null,
    description: 'Always null: no events are delivered here, so there is no delivery rate.',
  })
  delivery_rate_24h: number | null;

  @ApiProperty({ example: false, description: 'Always false: a deleted config is removed (DELETE).' })
  deleted: boolean;
}

const READ_ONLY = [
  'id',
  'created_at',
  'updated_at',
  'team_id',
  'plugin_info',
  'error',
  'delivery_rate_24h',
  'deleted',
];

abstract class PluginConfigOptionsDto {
  @ApiPropertyOptional({ type: Boolean, default: false, example: true })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  enabled?: boolean;

  @ApiPropertyOptional({ type: Number, default: 0, minimum: -1000000, maximum: 1000000 })
  @IsOmittable()
  @IsInt({ message: 'Must be an integer.' })
  @Min(-1000000, { message: 'Must be at least -1000000.' })
  @Max(1000000, { message: 'Must be at most 1000000.' })
  order?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'The settings (an object). On PATCH it replaces the current one, except that secret keys left out, or ' +
      'sent as null or as the mask, keep their value.',
  })
  @IsOmittable()
  @IsObject({ message: 'Must be an object.' })
  config?: JsonObject;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 400,
    description: "Its own name (null: the plugin's).",
  })
  @IsOptional()
  @MaxLength(400, { message: 'Ensure this field has no more than 400 characters.' })
  @IsString({ message: 'Must be a string.' })
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 1000,
    description: "Its own description (null: the plugin's).",
  })
  @IsOptional()
  @MaxLength(1000, { message: 'Ensure this field has no more than 1000 characters.' })
  @IsString({ message: 'Must be a string.' })
  description?: string | null;
}

@ReadOnlyFields(...READ_ONLY)
export class CreatePluginConfigDto extends PluginConfigOptionsDto {
  @ApiProperty({
    type: 'integer',
    example: 1,
    description:
      "A plugin record visible to the project's organization (its own or a global one). The example, 1, is the " +
      'first record created on a fresh database (for instance by the example of `POST …/pipeline_transformations`).',
  })
  @IsDefined()
  @IsInt({ message: 'Must be an integer.' })
  plugin: number;
}

/** PATCH body: `plugin` may be sent back as it is (another plugin is 400 `read_only_field`). */
@ReadOnlyFields(...READ_ONLY)
export class UpdatePluginConfigDto extends PluginConfigOptionsDto {
  @ApiPropertyOptional({
    type: 'integer',
    description: 'Immutable: accepted only when equal to the current plugin.',
  })
  @IsOmittable()
  @IsInt({ message: 'Must be an integer.' })
  plugin?: number;
}

/**
 * PUT body, as PostHog's: `plugin` is required (and must be the current one, else 400 `read_only_field`); the
 * other fields, optional, keep their value when left out.
 */
@ReadOnlyFields(...READ_ONLY)
export class ReplacePluginConfigDto extends PluginConfigOptionsDto {
  @ApiProperty({
    type: 'integer',
    example: 1,
    description:
      "Required; immutable: accepted only when equal to the current plugin (the example's config, on a fresh " +
      'database, is of record 1).',
  })
  @IsDefined()
  @IsInt({ message: 'Must be an integer.' })
  plugin: number;
}
