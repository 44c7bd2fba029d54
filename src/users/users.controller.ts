import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { toProjectDto } from '../projects/dto/project.dto.js';
import { ProjectsService } from '../projects/projects.service.js';
import { CurrentUserDto, toUserDto } from './dto/user.dto.js';
import { UsersService } from './users.service.js';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly organizations: OrganizationsService,
    private readonly projects: ProjectsService,
  ) {}

  @Get('@me')
  @RequireScopes()
  @ApiOperation({
    summary: 'The calling user',
    description: 'Any valid key, no scope needed. Includes the organizations visible to the key.',
  })
  @ApiOkResponse({ type: CurrentUserDto })
  async me(@CurrentPrincipal() principal: Principal): Promise<CurrentUserDto> {
    const user = await this.users.findById(principal.userId);
    if (!user) throw ApiError.authenticationFailed();
    const organizations = await this.organizations.summaries(principal);
    const current = organizations[0] ?? null;
    const project = current ? await this.projects.findDefault(current.id) : null;
    return {
      ...toUserDto(user),
      organization: current,
      organizations,
      team: project ? toProjectDto(project) : null,
    };
  }
}
