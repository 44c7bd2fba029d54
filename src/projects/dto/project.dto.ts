import { ApiProperty } from '@nestjs/swagger';
import type { ProjectEntity } from '../project.entity.js';

/** A project (PostHog's "team"). */
export class ProjectDto {
  @ApiProperty({ type: 'integer', example: 1 })
  id: number;

  @ApiProperty({ format: 'uuid' })
  uuid: string;

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
    description: 'Always false: this service stores no analytics events (only session recordings).',
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
}

export function toProjectDto(p: ProjectEntity): ProjectDto {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organizationId,
    name: p.name,
    api_token: p.apiToken,
    timezone: p.timezone,
    created_at: p.createdAt.toISOString(),
    session_recording_opt_in: p.sessionRecordingOptIn,
    session_recording_retention_period_days: p.sessionRecordingRetentionPeriodDays,
    ingested_event: false,
    completed_snippet_onboarding: false,
    has_completed_onboarding_for: null,
    is_demo: false,
    access_control: false,
  };
}
