import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe, UuidPipe } from '../common/validation/id.pipe.js';
import {
  CreateRecordingAccessRuleDto,
  UpdateRecordingAccessRuleDto,
} from './dto/recording-access-rule-input.dto.js';
import { RecordingAccessRuleDto } from './dto/recording-access-rule.dto.js';
import { PROJECT_MAX_RULES, RecordingAccessRulesService } from './recording-access-rules.service.js';

const WHO =
  'Admins and owners of the organization only (a member gets 403). A recording a rule matches may be watched ' +
  'only by the members of its roles and the admins and owners; to everyone else it does not exist (absent from ' +
  'lists and counts, 404 on its routes, its events left out, its shared link dead unless its issuer may watch ' +
  'it). A recording matched by several rules needs a role of each.';
const BAD_BODY = {
  description:
    'An unknown field or a bad value; a field the kind needs left out, or a field of the other kind set; a ' +
    'pattern with more than 10 `*`; a role id that is not a role of the organization (`role_ids`); a project ' +
    `already holding ${PROJECT_MAX_RULES} rules (\`max_rules\`). \`attr\` names the field.`,
  type: ErrorBodyDto,
};
const ID = { name: 'id', format: 'uuid', description: 'The id of the rule.' };

@ApiTags('recording access rules')
@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })
@ApiNotFoundResponse({ description: "No such project or rule among the caller's.", type: ErrorBodyDto })
@ApiForbiddenResponse({
  description: 'The caller is a member (not an admin or owner), or the key lacks the scope.',
  type: ErrorBodyDto,
})
@Controller('api/projects/:project_id/recording_access_rules')
export class RecordingAccessRulesController {
  constructor(private readonly rules: RecordingAccessRulesService) {}

  @Get()
  @RequireScopes('recording_access_rule:read')
  @ApiOperation({ summary: "List a project's recording access rules", description: `Oldest first. ${WHO}` })
  @Paginated(RecordingAccessRuleDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @PageQuery() page: PageParams,
  ): Promise<Page<RecordingAccessRuleDto>> {
    return this.rules.list(principal, projectId, page);
  }

  @Post()
  @RequireScopes('recording_access_rule:write')
  @ApiOperation({
    summary: 'Add a recording access rule',
    description: `Takes effect on the next request of every user. At most ${PROJECT_MAX_RULES} per project. ${WHO}`,
  })
  @ApiCreatedResponse({ type: RecordingAccessRuleDto })
  @ApiBadRequestResponse(BAD_BODY)
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    return this.rules.create(principal, projectId, body);
  }

  @Get(':id')
  @RequireScopes('recording_access_rule:read')
  @ApiOperation({ summary: 'Retrieve a recording access rule', description: WHO })
  @ApiParam(ID)
  @ApiOkResponse({ type: RecordingAccessRuleDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<RecordingAccessRuleDto> {
    return this.rules.retrieve(principal, projectId, id);
  }

  @Patch(':id')
  @RequireScopes('recording_access_rule:write')
  @ApiOperation({
    summary: 'Change a recording access rule',
    description:
      'The fields sent replace the rule’s; `role_ids`, when sent, replaces its roles. Changing `kind` clears the ' +
      `fields of the former kind the body does not set. Takes effect on the next request. ${WHO}`,
  })
  @ApiParam(ID)
  @ApiOkResponse({ type: RecordingAccessRuleDto })
  @ApiBadRequestResponse(BAD_BODY)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
    @Body() body: UpdateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    return this.rules.update(principal, projectId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('recording_access_rule:write')
  @ApiOperation({ summary: 'Delete a recording access rule', description: WHO })
  @ApiParam(ID)
  @ApiNoContentResponse({ description: 'Deleted: what it hid is visible again on the next request.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.rules.delete(principal, projectId, id);
  }
}
