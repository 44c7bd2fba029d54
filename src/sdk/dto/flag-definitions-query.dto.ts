import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * The query of the server SDKs' definitions poll (`?token=<project token>&send_cohorts`), checked by the
 * service: `token` must be one string; `send_cohorts` is a bare flag whose value does not matter.
 */
export class FlagDefinitionsQueryDto {
  @ApiProperty({
    required: false,
    description:
      "The project's public token (`api_token` of `GET /api/projects/:id`, `phc_…`). Required with a personal API " +
      "key; optional with a project secret token (given, it must be that token's project's).",
  })
  @Allow()
  token?: unknown;

  @ApiProperty({
    required: false,
    description:
      'Present (any value, or none) when the SDK evaluates cohorts itself: `cohorts` is then filled. The service has no cohorts, so the answer is the same either way.',
  })
  @Allow()
  send_cohorts?: unknown;
}
