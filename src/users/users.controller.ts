import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { CurrentUserService } from './current-user.service.js';
import { CurrentUserDto } from './dto/user.dto.js';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(private readonly currentUser: CurrentUserService) {}

  @Get('@me')
  @RequireScopes()
  @ApiOperation({
    summary: 'The calling user',
    description:
      "Any valid key, no scope needed. In the shape of PostHog's user: the current organization in full (the " +
      'one created or joined most recently among those visible to the key), every organization visible to the ' +
      "key, and the current organization's default project as `team`.",
  })
  @ApiOkResponse({ type: CurrentUserDto })
  me(@CurrentPrincipal() principal: Principal): Promise<CurrentUserDto> {
    return this.currentUser.describe(principal);
  }
}
