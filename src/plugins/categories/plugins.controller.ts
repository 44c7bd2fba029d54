import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  type Type,
} from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiGatewayTimeoutResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../../common/auth/auth.decorators.js';
import type { Principal } from '../../common/auth/principal.js';
import { ErrorBodyDto } from '../../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../../common/pagination/page.js';
import { PageNumberPaginated, PageQuery, Paginated } from '../../common/pagination/paginated.decorator.js';
import { IntIdPipe, UuidPipe } from '../../common/validation/id.pipe.js';
import { PluginActivityDto } from '../activity/dto/plugin-activity.dto.js';
import { PluginConfigDto } from '../configs/dto/plugin-config.dto.js';
import { CreatePluginDto, ReplacePluginDto, UpdatePluginDto } from '../records/dto/plugin-input.dto.js';
import { PluginDto, PluginUpdateCheckDto } from '../records/dto/plugin.dto.js';
import { SourceChangesPipe } from '../records/dto/source-changes.pipe.js';
import type { CatalogEntry } from '../catalog/plugin-catalog.js';
import {
  CATEGORY_NOUNS,
  CATEGORY_SEGMENTS,
  PLUGIN_CATEGORIES,
  type PluginCategory,
} from './plugin-category.js';
import { MAX_SOURCE_FILE_BYTES, MAX_SOURCE_FILES, type SourceChanges } from '../rules/plugin-rules.js';
import { PluginsService } from '../records/plugins.service.js';

/** One plugin of the repository catalog (keys beyond these are passed through as the catalog has them). */
export class CatalogEntryDto {
  @ApiProperty({ example: 'Customer.io' })
  name: string;

  @ApiProperty({ example: 'https://github.com/PostHog/customerio-plugin' })
  url: string;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ type: String, nullable: true })
  icon: string | null;

  @ApiProperty({ type: String, nullable: true, example: '2.3.0' })
  latest_tag: string | null;
}

const NOT_FOUND = {
  description:
    "No such organization among the caller's, or no record with this id visible to it in this category " +
    '(its own records and global ones; a record of another category is 404 here).',
  type: ErrorBodyDto,
};
const ACCESS = "Needs the organization's plugins_access_level at least";
const BAD_BODY = {
  description:
    'Invalid body: an unknown field, a bad type, a plugin_type/url mismatch or a url already used in the ' +
    'organization (`unique`), another url than the record’s (`read_only_field`), capabilities of another ' +
    'category, or a JSON field of the wrong shape (`attr` names the nested field, e.g. ' +
    '`capabilities__methods`). Read-only fields sent are ignored.',
  type: ErrorBodyDto,
};
const CatalogFailures = () =>
  applyDecorators(
    ApiBadGatewayResponse({
      description:
        'PLUGIN_REPOSITORY_URL could not be fetched (`repository_unavailable`) or returned an invalid catalog ' +
        '(`repository_invalid`).',
      type: ErrorBodyDto,
    }),
    ApiGatewayTimeoutResponse({
      description:
        'PLUGIN_REPOSITORY_URL did not answer within PLUGIN_REPOSITORY_TIMEOUT_MS (`repository_timeout`).',
      type: ErrorBodyDto,
    }),
  );
const ID_PARAM = ApiParam({ name: 'id', schema: { type: 'integer' }, description: 'The record id.' });

/** Request examples per category: each with capabilities of its own category, and a url of its own. */
const EXAMPLES: Record<PluginCategory, { create: Record<string, unknown>; change: Record<string, unknown> }> =
  {
    transformations: {
      create: {
        plugin_type: 'custom',
        name: 'Property filter',
        url: 'https://github.com/PostHog/posthog-filter-out-plugin',
        tag: '1.0.0',
        capabilities: { methods: ['processEvent'] },
      },
      change: { name: 'Property filter', description: 'Drops events of internal users.', tag: '1.0.1' },
    },
    destinations: {
      create: {
        plugin_type: 'custom',
        name: 'Customer.io',
        url: 'https://github.com/PostHog/customerio-plugin',
        tag: '2.3.0',
        capabilities: { methods: ['onEvent'] },
      },
      change: { name: 'Customer.io', description: 'Sends events to Customer.io.', tag: '2.4.0' },
    },
    import_apps: {
      create: {
        plugin_type: 'custom',
        name: 'GitHub star sync',
        url: 'https://github.com/PostHog/github-star-sync-plugin',
        capabilities: { scheduled_tasks: ['runEveryHour'] },
      },
      change: { name: 'GitHub star sync', description: 'Imports stars as events, hourly.' },
    },
    frontend_apps: {
      create: {
        plugin_type: 'custom',
        name: 'Notification bar',
        url: 'https://github.com/PostHog/notification-bar-app',
        capabilities: {},
      },
      change: { name: 'Notification bar', description: 'Shows a banner on the site.' },
    },
  };

const pascal = (segment: string) =>
  segment
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/**
 * The controller of one category path, `/api/organizations/:organization_id/<segment>`. All four categories
 * share this one definition (and PluginsService); each gets its own class so every route appears in the route
 * inventory and Swagger under its real path. The static sub-paths are declared before `:id`, so they are never
 * taken for an id.
 */
export function pluginsControllerFor(category: PluginCategory): Type<unknown> {
  const segment = CATEGORY_SEGMENTS[category];
  const { one, many } = CATEGORY_NOUNS[category];
  const aOne = /^[aeiou]/.test(one) ? `an ${one}` : `a ${one}`;

  @ApiTags('plugins')
  @ApiExtraModels(CatalogEntryDto)
  @ApiParam({ name: 'organization_id', format: 'uuid' })
  @ApiNotFoundResponse(NOT_FOUND)
  @Controller(`api/organizations/:organization_id/${segment}`)
  class PluginsCategoryController {
    constructor(private readonly plugins: PluginsService) {}

    @Get('activity')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: `List the change history of the organization's ${many}`,
      description:
        `${ACCESS} 3. Created, updated, source_changed, upgraded and deleted entries (deleted records ` +
        'included), newest first (`created_at`, then id); who acted and the field-level changes. In the shape ' +
        "of PostHog's activity log: pages by `page` (from 1) and `limit` (default 10), " +
        '`{results, next, previous, total_count}`.',
    })
    @PageNumberPaginated(PluginActivityDto, 10)
    activity(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @PageQuery() page: PageParams,
    ): Promise<Page<PluginActivityDto>> {
      return this.plugins.activity(principal, organizationId, category, page);
    }

    @Get('exports_unsubscribe_configs')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: "List the enabled configs of destinations in the organization's projects",
      description:
        `${ACCESS} 3. The same list on every category path: enabled plugin configs whose plugin is a ` +
        'destination, by project, `order`, id, of the projects whose plugin configs the caller may see (their ' +
        'project and `plugin` access levels above `none`; only the key’s projects for a project-restricted key).',
    })
    @ApiOkResponse({ type: [PluginConfigDto] })
    exportsUnsubscribeConfigs(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
    ): Promise<PluginConfigDto[]> {
      return this.plugins.exportsUnsubscribeConfigs(principal, organizationId);
    }

    @Get('repository')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: 'List the plugin repository catalog',
      description:
        `${ACCESS} 3. The catalog from PLUGIN_REPOSITORY_URL (cached PLUGIN_REPOSITORY_CACHE_SECONDS), or the ` +
        'one shipped with the service when unset. The same list on every category path.',
    })
    @ApiOkResponse({ type: [CatalogEntryDto] })
    @CatalogFailures()
    repository(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
    ): Promise<CatalogEntry[]> {
      return this.plugins.repository(principal, organizationId);
    }

    @Get('unused')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: `List the ids of ${many} no project uses`,
      description:
        `${ACCESS} 3. Ids (ascending) of the ${many} visible to the organization that no project of the ` +
        'organization has an enabled plugin config for, among the projects whose plugin configs the caller may ' +
        'see (their project and `plugin` access levels above `none`; the key’s projects for a restricted key).',
    })
    @ApiOkResponse({ schema: { type: 'array', items: { type: 'integer' }, example: [3, 7] } })
    unused(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
    ): Promise<number[]> {
      return this.plugins.unused(principal, organizationId, category);
    }

    @Get()
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: `List ${many}`,
      description:
        `${ACCESS} 3. The organization's own ${many} by id, then the global ${many} of other ` +
        'organizations by id.',
    })
    @Paginated(PluginDto)
    list(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @PageQuery() page: PageParams,
    ): Promise<Page<PluginDto>> {
      return this.plugins.list(principal, organizationId, category, page);
    }

    @Post()
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Create ${aOne}`,
      description:
        `${ACCESS} 6 (\`is_global: true\` needs 9, granted by the operator, and an admin or owner caller). Without \`capabilities\` the record gets the ${one} ` +
        'default; capabilities of another category are refused.',
    })
    @ApiBody({
      type: CreatePluginDto,
      examples: { [category]: { summary: aOne, value: EXAMPLES[category].create } },
    })
    @ApiCreatedResponse({ type: PluginDto })
    @ApiBadRequestResponse(BAD_BODY)
    create(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Body() body: CreatePluginDto,
    ): Promise<PluginDto> {
      return this.plugins.create(principal, organizationId, category, body);
    }

    @Get(':id/check_for_updates')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: `Check ${aOne} for a newer version`,
      description:
        `${ACCESS} 6; the organization's own records only (403 for another's global one). Sets ` +
        "`latest_tag` from the repository catalog's entry for the record's url (null when there is none).",
    })
    @ID_PARAM
    @ApiOkResponse({ type: PluginUpdateCheckDto })
    @CatalogFailures()
    checkForUpdates(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
    ): Promise<{ plugin: PluginDto }> {
      return this.plugins.checkForUpdates(principal, organizationId, category, id);
    }

    @Get(':id/source')
    @RequireScopes('plugin:read')
    @ApiOperation({
      summary: `Read the source files of ${aOne}`,
      description:
        `${ACCESS} 3. \`{filename: text}\`; a record whose \`plugin_type\` is not \`source\` has no source ` +
        'files and answers `{}`, as PostHog does.',
    })
    @ID_PARAM
    @ApiOkResponse({
      schema: { type: 'object', additionalProperties: { type: 'string' }, example: { 'index.ts': '...' } },
    })
    source(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
    ): Promise<Record<string, string>> {
      return this.plugins.source(principal, organizationId, category, id);
    }

    @Patch(':id/update_source')
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Change the source files of ${aOne}`,
      description:
        `${ACCESS} 6; own records of \`plugin_type: source\` only. Body \`{filename: text | null}\` (null ` +
        `deletes); file names are "/"-separated segments of letters, digits, "_", "-", "." (not starting ` +
        `with "."), at most 200 characters; at most ${MAX_SOURCE_FILE_BYTES} bytes per file and ` +
        `${MAX_SOURCE_FILES} files. A \`plugin.json\` written here must be a JSON object; its \`name\` and ` +
        '`config` become the record’s `name` and `config_schema`. One transaction; returns every file. ' +
        'On a record whose `plugin_type` is not `source`, nothing is written and `{}` is answered, as PostHog does.',
    })
    @ID_PARAM
    @ApiBody({
      schema: {
        type: 'object',
        additionalProperties: { type: 'string', nullable: true },
        example: { 'index.ts': 'export function processEvent(event) { return event }', 'old.ts': null },
      },
    })
    @ApiOkResponse({ schema: { type: 'object', additionalProperties: { type: 'string' } } })
    @ApiBadRequestResponse({
      description:
        'A bad file name, a file too large or too many, a value neither text nor null, ' +
        'or an invalid plugin.json (`attr` names the file).',
      type: ErrorBodyDto,
    })
    updateSource(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
      @Body(SourceChangesPipe) body: SourceChanges,
    ): Promise<Record<string, string>> {
      return this.plugins.updateSource(principal, organizationId, category, id, body);
    }

    @Post(':id/upgrade')
    @HttpCode(200)
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Upgrade ${aOne} to its latest version`,
      description:
        `${ACCESS} 6; own records only. Sets \`tag\` to \`latest_tag\` (as found by check_for_updates). A ` +
        '`source` record is answered unchanged (its versions are its source files); a `local` record, or one ' +
        'without a known latest_tag, is 400. Takes no body (one sent is ignored).',
    })
    @ID_PARAM
    @ApiOkResponse({ type: PluginDto })
    @ApiBadRequestResponse({
      description: 'A local record, or no known latest_tag (`invalid_state`).',
      type: ErrorBodyDto,
    })
    upgrade(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
    ): Promise<PluginDto> {
      return this.plugins.upgrade(principal, organizationId, category, id);
    }

    @Get(':id')
    @RequireScopes('plugin:read')
    @ApiOperation({ summary: `Retrieve ${aOne}`, description: `${ACCESS} 3. Own and global records.` })
    @ID_PARAM
    @ApiOkResponse({ type: PluginDto })
    retrieve(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
    ): Promise<PluginDto> {
      return this.plugins.retrieve(principal, organizationId, category, id);
    }

    @Patch(':id')
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Update ${aOne}`,
      description:
        `${ACCESS} 6; changing \`is_global\` needs 9 (granted by the operator) and an admin or owner caller ` +
        "(403 otherwise). Own records only (403 for another organization's global one). Capabilities that would " +
        'make it another category are refused (400). A global record that projects of other organizations use ' +
        'cannot be made private (400 `in_use`).',
    })
    @ID_PARAM
    @ApiBody({
      type: UpdatePluginDto,
      examples: { [category]: { summary: aOne, value: EXAMPLES[category].change } },
    })
    @ApiOkResponse({ type: PluginDto })
    @ApiBadRequestResponse(BAD_BODY)
    update(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
      @Body() body: UpdatePluginDto,
    ): Promise<PluginDto> {
      return this.plugins.update(principal, organizationId, category, id, body);
    }

    @Put(':id')
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Replace ${aOne}`,
      description:
        `${ACCESS} 6 (9 to change \`is_global\`); own records only. A full update: \`name\` is required, ` +
        'fields left out keep their value, `url` may only be sent back unchanged (400 `read_only_field`), ' +
        'read-only fields sent are ignored.',
    })
    @ID_PARAM
    @ApiBody({
      type: ReplacePluginDto,
      examples: { [category]: { summary: aOne, value: EXAMPLES[category].change } },
    })
    @ApiOkResponse({ type: PluginDto })
    @ApiBadRequestResponse(BAD_BODY)
    replace(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
      @Body() body: ReplacePluginDto,
    ): Promise<PluginDto> {
      return this.plugins.update(principal, organizationId, category, id, body);
    }

    @Delete(':id')
    @HttpCode(204)
    @RequireScopes('plugin:write')
    @ApiOperation({
      summary: `Delete ${aOne}`,
      description:
        `${ACCESS} 6. Its source files and the plugin configs of the organization's own projects go with it; ` +
        'its history stays. A global record (of any organization) cannot be deleted, nor one that projects of ' +
        'other organizations still use (400 `in_use`).',
    })
    @ID_PARAM
    @ApiNoContentResponse({ description: 'Deleted.' })
    @ApiBadRequestResponse({
      description: 'The record is global, or other organizations use it (`in_use`).',
      type: ErrorBodyDto,
    })
    async delete(
      @CurrentPrincipal() principal: Principal,
      @Param('organization_id', UuidPipe) organizationId: string,
      @Param('id', IntIdPipe) id: number,
    ): Promise<void> {
      await this.plugins.delete(principal, organizationId, category, id);
    }
  }

  Object.defineProperty(PluginsCategoryController, 'name', { value: `${pascal(segment)}Controller` });
  return PluginsCategoryController;
}

/** The four category controllers (pipeline_transformations, …_destinations, …_import_apps, …_frontend_apps). */
export const PLUGIN_CATEGORY_CONTROLLERS = PLUGIN_CATEGORIES.map(pluginsControllerFor);
