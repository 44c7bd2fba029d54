import { Controller, Get, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AcceptsProjectSecret, projectCredentialOf, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { FlagDefinitionsQueryDto } from './dto/flag-definitions-query.dto.js';
import { emptyFlagDefinitions, FlagDefinitionsDto } from './dto/flag-definitions.dto.js';
import { SdkService } from './sdk.service.js';

const DESCRIPTION =
  'What server SDKs (posthog-node, posthog-python, …) poll when initialised with a personal API key for local evaluation: `GET /flags/definitions?token=<project token>&send_cohorts` with `Authorization: Bearer <personal API key>` (scope `feature_flag:read`). Answers as PostHog does for a project without feature flags: `{"flags": [], "group_type_mapping": {}, "cohorts": {}}` — the service has no feature flags, so the SDKs evaluate every flag as absent, without logging an error. 401 `authentication_failed` when no project the key\'s user is a member of has the token; 403 when the key is restricted to other projects. A project secret credential (`Authorization: Bearer phs_…`) is accepted instead of a personal API key: a project secret API key holding `feature_flag:read` (`/api/projects/:id/project_secret_api_keys/`), or the project\'s own `secret_api_token` (or, after a rotation, its `secret_api_token_backup`). The answer is then for its project, `token` may be left out (given, it must be that project\'s api_token, else 401), and an unknown `phs_` secret is 401 `authentication_failed` (counted as a failed authentication of the address).';
const EXAMPLE = emptyFlagDefinitions();
const BAD_TOKEN = {
  description: 'No `token` (`required`), or more than one.',
  type: ErrorBodyDto,
};

/**
 * The server SDKs' local evaluation poll, at the path current SDKs use and at PostHog's older one. Not an SDK
 * public route: it takes a personal API key, like `/api`.
 */
@ApiTags('sdk')
@Controller()
export class FlagDefinitionsController {
  constructor(private readonly sdk: SdkService) {}

  @Get('flags/definitions')
  @RequireScopes('feature_flag:read')
  @AcceptsProjectSecret()
  @ApiOperation({ summary: 'Feature flag definitions for local evaluation', description: DESCRIPTION })
  @ApiOkResponse({ type: FlagDefinitionsDto, example: EXAMPLE })
  @ApiBadRequestResponse(BAD_TOKEN)
  definitions(@Req() req: Request, @Query() query: FlagDefinitionsQueryDto): Promise<FlagDefinitionsDto> {
    return this.answer(req, query);
  }

  @Get('api/feature_flag/local_evaluation')
  @RequireScopes('feature_flag:read')
  @AcceptsProjectSecret()
  @ApiOperation({
    summary: 'Feature flag definitions for local evaluation (older SDK versions)',
    description: `The path SDK versions before \`/flags/definitions\` poll (posthog-node up to 5.x: \`/api/feature_flag/local_evaluation?token=…&send_cohorts\`); the same answer. ${DESCRIPTION}`,
  })
  @ApiOkResponse({ type: FlagDefinitionsDto, example: EXAMPLE })
  @ApiBadRequestResponse(BAD_TOKEN)
  localEvaluation(@Req() req: Request, @Query() query: FlagDefinitionsQueryDto): Promise<FlagDefinitionsDto> {
    return this.answer(req, query);
  }

  /** With a project secret credential (authenticated by the guard) or else the personal key's principal. */
  private answer(req: Request, query: FlagDefinitionsQueryDto): Promise<FlagDefinitionsDto> {
    const credential = projectCredentialOf(req);
    if (credential) return this.sdk.flagDefinitionsForProject(credential.projectId, query.token);
    const principal = (req as Request & { principal?: Principal }).principal;
    if (!principal) throw new Error('flag definitions reached without a principal or project secret');
    return this.sdk.flagDefinitions(principal, query.token);
  }
}
