import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsInt, IsObject, Max, Min } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import type { JsonObject } from '../plugin-rules.js';

/** Shown instead of the value of a config key the plugin's schema marks `secret`. */
export const SECRET_MASK = '**************** SECRET ****************';

/** A plugin enabled (or not) in a project. */
export class PluginConfigDto {
  @ApiProperty({ example: 4 })
  id: number;

  @ApiProperty({ example: 7, description: 'The plugin record.' })
  plugin: number;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ example: 0, description: 'Position among the project’s configs (lists sort by it).' })
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
}

const READ_ONLY = ['id', 'created_at', 'updated_at'];

abstract class PluginConfigOptionsDto {
  @ApiPropertyOptional({ type: Boolean, default: false })
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
}

@ReadOnlyFields(...READ_ONLY)
export class CreatePluginConfigDto extends PluginConfigOptionsDto {
  @ApiProperty({
    example: 7,
    description: "A plugin record visible to the project's organization (its own or a global one).",
  })
  @IsDefined()
  @IsInt({ message: 'Must be an integer.' })
  plugin: number;
}

@ReadOnlyFields(...READ_ONLY, 'plugin')
export class UpdatePluginConfigDto extends PluginConfigOptionsDto {}
