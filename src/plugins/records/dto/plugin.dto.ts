import { ApiProperty } from '@nestjs/swagger';
import { hogFunctionMigrationAvailable } from '../../catalog/hog-function-migrations.js';
import { PLUGIN_TYPES } from '../../rules/plugin-rules.js';
import type { PluginEntity } from '../plugin.entity.js';

const FREE_FORM_OBJECT = { type: 'object', additionalProperties: true } as const;

/** A pipeline plugin record (docs/interface.md §2.9); the same shape in all four categories. */
export class PluginDto {
  @ApiProperty({ example: 7 })
  id: number;

  @ApiProperty({ enum: PLUGIN_TYPES, example: 'custom' })
  plugin_type: string;

  @ApiProperty({ example: 'Customer.io' })
  name: string;

  @ApiProperty({ type: String, nullable: true, example: 'Send events to Customer.io.' })
  description: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://github.com/PostHog/customerio-plugin',
    description:
      'Set at creation, then read-only. `file:<path>` (local), `inline://<name>` (inline) or an http(s) URL ' +
      'without credentials, query or fragment (stored with a lower-case host, no trailing slash); null only ' +
      'for `source` records.',
  })
  url: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  icon: string | null;

  @ApiProperty({
    oneOf: [{ type: 'array', items: FREE_FORM_OBJECT }, FREE_FORM_OBJECT],
    example: [{ key: 'apiKey', name: 'API key', type: 'string', required: true, secret: true }],
    description:
      "The plugin's settings form: a list of field objects (`key` a string, `secret` a boolean when present), " +
      'or an object. Updated from `plugin.json` `config` by update_source.',
  })
  config_schema: unknown;

  @ApiProperty({ type: String, nullable: true, example: '2.3.0', description: 'The installed version.' })
  tag: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '2.4.0',
    description:
      "The catalog's latest version of this url, as of the last check_for_updates (null: never checked, or " +
      'not in the catalog).',
  })
  latest_tag: string | null;

  @ApiProperty({
    description:
      'Visible (read-only) to every organization. Changing it needs plugins_access_level 9 and an admin or ' +
      'owner caller; a global record cannot be deleted, nor made private while other organizations use it.',
  })
  is_global: boolean;

  @ApiProperty({ format: 'uuid' })
  organization_id: string;

  @ApiProperty({ example: 'Acme' })
  organization_name: string;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    example: { methods: ['onEvent'], jobs: ['exportHistory'] },
    description:
      'Optional `methods`, `scheduled_tasks` and `jobs`, each a list of names. They decide the category: ' +
      '`processEvent` → transformations; else `onEvent`/`composeWebhook` → destinations; else any scheduled ' +
      'task or other method → import apps; else (no methods, no scheduled tasks) → frontend apps.',
  })
  capabilities: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM_OBJECT, example: {} })
  metrics: Record<string, unknown>;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    example: { exportHistory: { payload: {} } },
    description: 'Job names mapped to objects describing them.',
  })
  public_jobs: Record<string, unknown>;

  @ApiProperty({
    enum: ['true', 'false'],
    example: 'false',
    description:
      '"true" when the url is that of a plugin with an equivalent on the newer function runtime (so the ' +
      'record could be moved to it), else "false". A string, as the interface types it.',
  })
  hog_function_migration_available: string;
}

export function toPluginDto(entity: PluginEntity, organizationName: string): PluginDto {
  return {
    id: entity.id,
    plugin_type: entity.pluginType,
    name: entity.name,
    description: entity.description,
    url: entity.url,
    icon: entity.icon,
    config_schema: entity.configSchema,
    tag: entity.tag,
    latest_tag: entity.latestTag,
    is_global: entity.isGlobal,
    organization_id: entity.organizationId,
    organization_name: organizationName,
    capabilities: { ...entity.capabilities },
    metrics: entity.metrics,
    public_jobs: entity.publicJobs,
    hog_function_migration_available: hogFunctionMigrationAvailable(entity.url),
  };
}

/** check_for_updates: the record with its refreshed `latest_tag`. */
export class PluginUpdateCheckDto {
  @ApiProperty({ type: PluginDto })
  plugin: PluginDto;
}
