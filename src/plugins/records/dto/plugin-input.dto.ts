import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsBoolean,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { IsOmittable, Trim } from '../../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../../common/validation/read-only-fields.decorator.js';
import { PLUGIN_TYPES, type PluginType } from '../../rules/plugin-rules.js';

/** Fields of a record that clients read but never write. */
const READ_ONLY = [
  'id',
  'latest_tag',
  'organization_id',
  'organization_name',
  'hog_function_migration_available',
];

const Text = (max: number) =>
  applyDecorators(
    IsString({ message: 'Must be a string.' }),
    MaxLength(max, { message: `Ensure this field has no more than ${max} characters.` }),
  );

const Name = () =>
  applyDecorators(
    Trim(),
    IsString({ message: 'Must be a string.' }),
    MinLength(1, { message: 'This field may not be blank.' }),
    MaxLength(200, { message: 'Ensure this field has no more than 200 characters.' }),
  );

const FREE_FORM_OBJECT = { type: 'object', additionalProperties: true } as const;

/** The optional writable fields, shared by create and update. JSON shapes are checked by the service. */
abstract class PluginOptionsDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @IsOptional()
  @Text(10000)
  description?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 800, description: 'Usually an image URL.' })
  @IsOptional()
  @Text(800)
  icon?: string | null;

  @ApiPropertyOptional({
    oneOf: [{ type: 'array', items: FREE_FORM_OBJECT }, FREE_FORM_OBJECT],
    description:
      'A list of field objects (`key` a string and `secret` a boolean when present) or an object. Default {}.',
  })
  @Allow()
  config_schema?: unknown;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 200,
    description: 'The installed version.',
  })
  @IsOptional()
  @Text(200)
  tag?: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Visible to every organization. Setting it (to a new value) needs plugins_access_level 9 and an admin or ' +
      'owner caller (403 otherwise); making it false is refused while other organizations use it (400 ' +
      '`in_use`). Default false.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  is_global?: boolean;

  @ApiPropertyOptional({
    ...FREE_FORM_OBJECT,
    example: { methods: ['onEvent'] },
    description:
      '`methods`, `scheduled_tasks`, `jobs`: lists of distinct names; other keys refused. They must put the ' +
      "record in the path's category (else 400). Default on create: the category's own — transformations " +
      '`{"methods": ["processEvent"]}`, destinations `{"methods": ["onEvent"]}`, import apps ' +
      '`{"scheduled_tasks": ["runEveryMinute"]}`, frontend apps `{}`.',
  })
  @Allow()
  capabilities?: unknown;

  @ApiPropertyOptional({ ...FREE_FORM_OBJECT, description: 'An object. Default {}.' })
  @Allow()
  metrics?: unknown;

  @ApiPropertyOptional({
    ...FREE_FORM_OBJECT,
    description: 'Job names mapped to objects (e.g. `{"payload": {...}}`). Default {}.',
  })
  @Allow()
  public_jobs?: unknown;
}

@ReadOnlyFields(...READ_ONLY)
export class CreatePluginDto extends PluginOptionsDto {
  @ApiPropertyOptional({ enum: PLUGIN_TYPES, default: 'custom' })
  @IsOmittable()
  @IsIn(PLUGIN_TYPES as unknown as string[], {
    message: `Must be one of ${PLUGIN_TYPES.map((t) => JSON.stringify(t)).join(', ')}.`,
  })
  plugin_type?: PluginType;

  @ApiProperty({ example: 'Customer.io', maxLength: 200, description: 'Trimmed; 1 to 200 characters.' })
  @IsDefined()
  @Name()
  name: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 800,
    example: 'https://github.com/PostHog/customerio-plugin',
    description:
      'Required except for `source` records. `local`: `file:<path>`; `inline`: `inline://<name>`; others an ' +
      'http(s) URL without credentials, query or fragment. Unique among the non-global records of the ' +
      'organization (400 `unique`). Read-only after creation.',
  })
  @IsOptional()
  @IsString({ message: 'Must be a string.' })
  url?: string | null;
}

/** What PATCH and PUT share: the options, the type, and `url` (immutable, so only its current value is taken). */
abstract class PluginChangeDto extends PluginOptionsDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Immutable: accepted only when equal to the current url (400 `read_only_field` otherwise).',
  })
  @IsOptional()
  @IsString({ message: 'Must be a string.' })
  url?: string | null;

  @ApiPropertyOptional({
    enum: PLUGIN_TYPES,
    description: 'A record without url can only be `source`.',
  })
  @IsOmittable()
  @IsIn(PLUGIN_TYPES as unknown as string[], {
    message: `Must be one of ${PLUGIN_TYPES.map((t) => JSON.stringify(t)).join(', ')}.`,
  })
  plugin_type?: PluginType;
}

/** PATCH body: the fields sent change. */
@ReadOnlyFields(...READ_ONLY)
export class UpdatePluginDto extends PluginChangeDto {
  @ApiPropertyOptional({ maxLength: 200, description: 'Trimmed; 1 to 200 characters.' })
  @IsOmittable()
  @Name()
  name?: string;
}

/** PUT body: a full update; `name` is required, fields left out keep their value. */
@ReadOnlyFields(...READ_ONLY)
export class ReplacePluginDto extends PluginChangeDto {
  @ApiProperty({ example: 'Customer.io', maxLength: 200, description: 'Trimmed; 1 to 200 characters.' })
  @IsDefined()
  @Name()
  name: string;
}
