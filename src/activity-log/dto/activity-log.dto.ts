import { ApiProperty } from '@nestjs/swagger';
import { ANY_JSON } from '../../common/openapi/any-json.js';

/** The user of an entry (PostHog's UserBasic). */
export class ActivityLogUserDto {
  @ApiProperty()
  id: number;

  @ApiProperty({ format: 'uuid' })
  uuid: string;

  @ApiProperty({ type: String, nullable: true })
  distinct_id: string | null;

  @ApiProperty()
  first_name: string;

  @ApiProperty()
  last_name: string;

  @ApiProperty()
  email: string;
}

/** One change of an entry's detail (PostHog's Change). */
export class ActivityLogChangeDto {
  @ApiProperty({ description: 'The kind of object changed (a scope).', example: 'Organization' })
  type: string;

  @ApiProperty({ enum: ['changed', 'created', 'deleted'] })
  action: string;

  @ApiProperty({ type: String, nullable: true, description: 'The field; null for the object as a whole.' })
  field: string | null;

  @ApiProperty({ ...ANY_JSON, description: 'The value before (secrets masked as `********`).' })
  before: unknown;

  @ApiProperty({ ...ANY_JSON, description: 'The value after (secrets masked as `********`).' })
  after: unknown;
}

/** What an entry says about the object (PostHog's Detail). */
export class ActivityLogDetailDto {
  @ApiProperty({ type: String, nullable: true })
  id: string | null;

  @ApiProperty({ type: String, nullable: true })
  name: string | null;

  @ApiProperty({ type: String, nullable: true })
  short_id: string | null;

  @ApiProperty({ type: String, nullable: true })
  type: string | null;

  @ApiProperty({ type: [ActivityLogChangeDto], nullable: true })
  changes: ActivityLogChangeDto[] | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  trigger: Record<string, unknown> | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'How it came: `method` and `route` of an API request, `command` of a CLI command, the path parameters; for ' +
      'a recording read, `query` (the snapshots source).',
  })
  context: Record<string, unknown> | null;
}

/** One entry of the activity log (PostHog's ActivityLog), with the key and address that made it. */
export class ActivityLogDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: ActivityLogUserDto, nullable: true, description: 'Who; null for the system.' })
  user: ActivityLogUserDto | null;

  @ApiProperty({ description: 'Always false: entries have no read state here.' })
  unread: boolean;

  @ApiProperty({ description: 'A change made by the system (the CLI, a SCIM provider), not by a user.' })
  is_system: boolean;

  @ApiProperty({
    example: 'updated',
    description: '`created`, `updated`, `deleted`, an action (`pause`, `verify`), or `viewed` for a read.',
  })
  activity: string;

  @ApiProperty({ example: 'BatchExport' })
  scope: string;

  @ApiProperty({ type: String, nullable: true })
  item_id: string | null;

  @ApiProperty({ type: ActivityLogDetailDto })
  detail: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  organization_id: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'The project; null for organization entries.' })
  team_id: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The key used: a personal API key id, or `project_secret_api_key:<id>`; null for the CLI.',
  })
  api_key_id: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The client's address (as TRUST_PROXY resolves it).",
  })
  ip: string | null;
}

/** A page of the log (PostHog's cursor pagination: no count). */
export class ActivityLogPageDto {
  @ApiProperty({ type: String, nullable: true, description: 'The next (older) page, or null.' })
  next: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The previous (newer) page, or null.' })
  previous: string | null;

  @ApiProperty({ type: [ActivityLogDto] })
  results: ActivityLogDto[];
}
