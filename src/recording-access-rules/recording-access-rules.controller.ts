import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
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
import { CreateRecordingAccessRuleDto } from './dto/recording-access-rule-input.dto.js';
import { RecordingAccessRuleDto } from './dto/recording-access-rule.dto.js';
import { RecordingAccessRulesService } from './recording-access-rules.service.js';

@ApiTags('recording_access_rules')
@ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' })
@ApiNotFoundResponse({
  description: "No such project or recording access rule among the caller's.",
  type: ErrorBodyDto,
})
@Controller('api/projects/:project_id/recording_access_rules')
export class RecordingAccessRulesController {
  constructor(private readonly recordingAccessRules: RecordingAccessRulesService) {}

  @Get()
  @RequireScopes('recording_access_rule:read')
  @ApiOperation({
    summary: "List a project's recording access rules",
    description: 'Any member of the project; oldest first.',
  })
  @Paginated(RecordingAccessRuleDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @PageQuery() page: PageParams,
  ): Promise<Page<RecordingAccessRuleDto>> {
    return this.recordingAccessRules.list(principal, projectId, page);
  }

  @Post()
  @RequireScopes('recording_access_rule:write')
  @ApiOperation({ summary: 'Add a recording access rule', description: 'Any member of the project.' })
  @ApiCreatedResponse({ type: RecordingAccessRuleDto })
  @ApiBadRequestResponse({
    description: 'Invalid body: a bad value or an unknown field.',
    type: ErrorBodyDto,
  })
  create(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Body() body: CreateRecordingAccessRuleDto,
  ): Promise<RecordingAccessRuleDto> {
    return this.recordingAccessRules.create(principal, projectId, body);
  }

  @Get(':id')
  @RequireScopes('recording_access_rule:read')
  @ApiOperation({ summary: 'Retrieve a recording access rule', description: 'Any member of the project.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: RecordingAccessRuleDto })
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<RecordingAccessRuleDto> {
    return this.recordingAccessRules.retrieve(principal, projectId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('recording_access_rule:write')
  @ApiOperation({ summary: 'Delete a recording access rule', description: 'Any member of the project.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id', UuidPipe) id: string,
  ): Promise<void> {
    await this.recordingAccessRules.delete(principal, projectId, id);
  }
}
