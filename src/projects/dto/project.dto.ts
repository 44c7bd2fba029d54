import { ApiProperty } from '@nestjs/swagger';
import { EXPERIMENT_STATS_METHODS } from '../../common/vocabulary/experiment-stats-methods.js';
import { MembershipLevel } from '../../common/vocabulary/membership-level.js';
import type { ProjectEntity } from '../project.entity.js';

/** A project (PostHog's "team"). */
export class ProjectDto {
  @ApiProperty({ type: 'integer', example: 1 })
  id: number;

  @ApiProperty({ format: 'uuid' })
  uuid: string;

  @ApiProperty({
    type: 'integer',
    example: 1,
    description:
      "The same as `id`: PostHog's project of this environment (one environment per project here).",
  })
  project_id: number;

  @ApiProperty({ format: 'uuid', description: 'Id of the organization the project belongs to.' })
  organization: string;

  @ApiProperty({ example: 'Default project' })
  name: string;

  @ApiProperty({
    example: 'phc_0123456789abcdefghijABCDEFGHIJ0123456789abc',
    description: 'Public project token used by capture clients.',
  })
  api_token: string;

  @ApiProperty({ example: 'UTC' })
  timezone: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When its settings last changed (its creation for a project not changed since).',
  })
  updated_at: string;

  @ApiProperty({
    type: 'integer',
    enum: [MembershipLevel.MEMBER, MembershipLevel.ADMIN, MembershipLevel.OWNER],
    example: MembershipLevel.OWNER,
    description:
      "The caller's effective level for the project: an organization admin's or owner's own level (8, 15), 8 for a " +
      'member an access control makes `admin` of the project, else 1.',
  })
  effective_membership_level: number;

  @ApiProperty({
    type: String,
    enum: ['member', 'admin'],
    example: 'admin',
    description:
      "PostHog's access level of the caller for this project: `admin` for organization admins and owners and for " +
      'members an access control makes `admin` of it, `member` for other members (`GET …/access_controls`).',
  })
  user_access_level: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'The project secret API token (`phs_…`), which server SDKs may send instead of a personal API key for ' +
      'local evaluation (`/flags/definitions`). Shown to admins of the project with a key holding ' +
      '`project:read`; null for other members. `PATCH /api/projects/:id/rotate_secret_token/` replaces it.',
  })
  secret_api_token: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'The previous secret token, still accepted until the next rotation; null before the first rotation and ' +
      'for members (as `secret_api_token`).',
  })
  secret_api_token_backup: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: "Always null: there is no live events stream here (PostHog's token for it).",
  })
  live_events_token: string | null;

  @ApiProperty({ example: false, description: 'Always false: no group analytics here.' })
  has_group_types: boolean;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [],
    description: 'Always empty: no group analytics here.',
  })
  group_types: Record<string, unknown>[];

  @ApiProperty({
    example: false,
    description: "Always false: there is no person-on-events query mode here (PostHog's query setting).",
  })
  person_on_events_querying_enabled: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {},
    description: "Always empty: no HogQL queries here (PostHog's default query modifiers).",
  })
  default_modifiers: Record<string, unknown>;

  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    example: [],
    description: "Always empty: no product onboarding here (PostHog's product intents).",
  })
  product_intents: Record<string, unknown>[];

  @ApiProperty({
    type: 'array',
    items: { type: 'string' },
    example: [],
    description: "Always empty: no onboarding setup tasks here (PostHog's setup task ids).",
  })
  available_setup_task_ids: string[];

  @ApiProperty({
    description:
      'Whether the SDK records sessions on sites using this project token: the remote config it fetches enables session recording only when this is true. Default true.',
    example: true,
  })
  session_recording_opt_in: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description:
      "Days this project's session recordings are kept, from the start of the (UTC) day each started; null: " +
      "the service's default (RECORDING_RETENTION_DAYS). Recordings past it disappear from the API and are purged.",
  })
  session_recording_retention_period_days: number | null;

  @ApiProperty({
    example: false,
    description:
      'True once the project has stored an analytics event (captured on /e/ and the other capture routes); it ' +
      'stays true after those events expire.',
  })
  ingested_event: boolean;

  @ApiProperty({ example: false, description: 'Always false: there is no onboarding here.' })
  completed_snippet_onboarding: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: null,
    description: "Always null: there is no onboarding here (PostHog's per-product onboarding map).",
  })
  has_completed_onboarding_for: Record<string, unknown> | null;

  @ApiProperty({ example: false, description: 'Always false: no demo projects.' })
  is_demo: boolean;

  @ApiProperty({ example: false, description: 'Always false: projects have no private mode.' })
  access_control: boolean;
  @ApiProperty({
    example: false,
    description:
      "Captured events get no `$ip` (the request's address is not stored, nor one the client sent). Default false.",
  })
  anonymize_ips: boolean;

  @ApiProperty({
    example: false,
    description:
      'The SDK does not autocapture clicks and form changes (served in the remote config). Default false.',
  })
  autocapture_opt_out: boolean;

  @ApiProperty({
    example: false,
    description: 'The SDK captures exceptions as `$exception` events (remote config). Default false.',
  })
  autocapture_exceptions_opt_in: boolean;

  @ApiProperty({
    example: false,
    description: 'Recordings include console logs (remote config). Default true.',
  })
  capture_console_log_opt_in: boolean;

  @ApiProperty({
    example: false,
    description: 'The SDK captures network timings (remote config). Default true.',
  })
  capture_performance_opt_in: boolean;

  @ApiProperty({
    example: false,
    description:
      'The SDK sends heatmap data (remote config); such events are stored as events. Default false.',
  })
  heatmaps_opt_in: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: "Days this project's events are kept; null: the service's default (EVENTS_RETENTION_DAYS).",
  })
  events_retention_period_days: number | null;

  @ApiProperty({
    type: String,
    enum: EXPERIMENT_STATS_METHODS,
    nullable: true,
    example: 'bayesian',
    description:
      'PostHog\'s default statistical method of new experiments: stored and returned (no experiments here); `""` ' +
      'and null as PostHog takes them. Default `bayesian`.',
  })
  default_experiment_stats_method: string | null;
}

/**
 * `level`: the caller's effective membership level for the project (`AccessibleProject.level`). `secretsReadable`:
 * the caller's key holds `project:read`; the secret tokens are shown only then, and only to the project's admins.
 */
export function toProjectDto(p: ProjectEntity, level: number, secretsReadable = false): ProjectDto {
  const showSecrets = secretsReadable && level >= MembershipLevel.ADMIN;
  return {
    id: p.id,
    uuid: p.uuid,
    project_id: p.id,
    organization: p.organizationId,
    name: p.name,
    api_token: p.apiToken,
    timezone: p.timezone,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    effective_membership_level: level,
    user_access_level: level >= MembershipLevel.ADMIN ? 'admin' : 'member',
    secret_api_token: showSecrets ? p.secretApiToken : null,
    secret_api_token_backup: showSecrets ? p.secretApiTokenBackup : null,
    live_events_token: null,
    has_group_types: false,
    group_types: [],
    person_on_events_querying_enabled: false,
    default_modifiers: {},
    product_intents: [],
    available_setup_task_ids: [],
    session_recording_opt_in: p.sessionRecordingOptIn,
    session_recording_retention_period_days: p.sessionRecordingRetentionPeriodDays,
    ingested_event: p.ingestedEvent,
    completed_snippet_onboarding: false,
    has_completed_onboarding_for: null,
    is_demo: false,
    access_control: false,
    anonymize_ips: p.anonymizeIps,
    autocapture_opt_out: p.autocaptureOptOut,
    autocapture_exceptions_opt_in: p.autocaptureExceptionsOptIn,
    capture_console_log_opt_in: p.captureConsoleLogOptIn,
    capture_performance_opt_in: p.capturePerformanceOptIn,
    heatmaps_opt_in: p.heatmapsOptIn,
    events_retention_period_days: p.eventsRetentionPeriodDays,
    default_experiment_stats_method: p.defaultExperimentStatsMethod,
  };
}
