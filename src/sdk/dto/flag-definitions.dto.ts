import { ApiProperty } from '@nestjs/swagger';

/**
 * What PostHog's local evaluation endpoint answers (`flags`, `group_type_mapping`, `cohorts`), for a project
 * without feature flags, group types or cohorts: the service has none of them.
 */
export class FlagDefinitionsDto {
  @ApiProperty({
    description: "The project's feature flag definitions: always empty (the service has no feature flags).",
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    maxItems: 0,
    example: [],
  })
  flags!: Record<string, unknown>[];

  @ApiProperty({
    description: 'Group type index → group type name: always empty (the service has no groups).',
    type: 'object',
    additionalProperties: { type: 'string' },
    example: {},
  })
  group_type_mapping!: Record<string, string>;

  @ApiProperty({
    description:
      'Cohort id → its property group, for `send_cohorts`: always empty (the service has no cohorts).',
    type: 'object',
    additionalProperties: true,
    example: {},
  })
  cohorts!: Record<string, unknown>;
}

/** The definitions of a project: the service keeps no flags, group types or cohorts. */
export function emptyFlagDefinitions(): FlagDefinitionsDto {
  return { flags: [], group_type_mapping: {}, cohorts: {} };
}
