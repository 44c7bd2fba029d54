import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { PageQuery, Paginated } from '../common/pagination/paginated.decorator.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { PersonDetailDto, PersonListQueryDto } from './dto/person-detail.dto.js';
import { PersonReadsService } from './person-reads.service.js';

const NOT_FOUND = {
  description: "No such project among the caller's, or no such person in it.",
  type: ErrorBodyDto,
};
const PROJECT = { name: 'project_id', type: 'integer', description: 'The id of the project.' } as const;

@ApiTags('persons')
@Controller('api/projects/:project_id/persons')
export class PersonsController {
  constructor(private readonly persons: PersonReadsService) {}

  @Get()
  @RequireScopes('person:read')
  @ApiOperation({
    summary: 'List persons',
    description:
      "The project's persons, newest first. A page holds at most `limit` persons and at most " +
      'PERSONS_LIST_MAX_BYTES of them (8 MB by default: their properties and distinct ids): a page past it ends ' +
      'early, and `next` starts at the first person left out. Each person lists at most 100 distinct ids ' +
      '(`distinct_ids_count` gives the number).',
  })
  @ApiParam(PROJECT)
  @ApiQuery({
    name: 'distinct_id',
    required: false,
    description: 'Only the person of this distinct id (PostHog: retrieve by distinct id).',
  })
  @ApiQuery({ name: 'email', required: false, description: 'Only persons whose `properties.email` is this.' })
  @ApiQuery({
    name: 'uuid',
    required: false,
    description: 'Only these persons: up to 100 comma-separated uuids.',
  })
  @ApiQuery({
    name: 'search',
    required: false,
    description:
      'Persons whose `properties.email` or `properties.name` or one of whose distinct ids contains this ' +
      '(case-insensitive), or whose uuid it is.',
  })
  @ApiQuery({
    name: 'properties',
    required: false,
    description:
      'JSON array of PostHog person property filters, all of which must hold: ' +
      '`[{"key": "email", "value": "ada@example.com", "operator": "exact", "type": "person"}]`. Operators: ' +
      '`exact` (`value` may be an array: any of them), `is_not`, `icontains`, `not_icontains`, `is_set`, ' +
      '`is_not_set`, `gt`, `lt`; any other is 400. At most 10 filters.',
  })
  @ApiNotFoundResponse(NOT_FOUND)
  @Paginated(PersonDetailDto)
  list(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Query() query: PersonListQueryDto,
    @PageQuery() page: PageParams,
  ): Promise<Page<PersonDetailDto>> {
    return this.persons.list(principal, projectId, query, page);
  }

  @Get(':id')
  @RequireScopes('person:read')
  @ApiOperation({
    summary: 'Retrieve a person',
    description: 'By its uuid (the `id` the list answers) or its integer id.',
  })
  @ApiParam(PROJECT)
  @ApiParam({
    name: 'id',
    description: "The person's uuid, or its integer id.",
    example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
  })
  @ApiOkResponse({ type: PersonDetailDto })
  @ApiNotFoundResponse(NOT_FOUND)
  retrieve(
    @CurrentPrincipal() principal: Principal,
    @Param('project_id', IntIdPipe) projectId: number,
    @Param('id') id: string,
  ): Promise<PersonDetailDto> {
    return this.persons.retrieve(principal, projectId, id);
  }
}
