import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { CurrentUserService } from './current-user.service.js';
import { UpdateCurrentUserDto } from './dto/update-user.dto.js';
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

  @Patch('@me')
  @RequireScopes('user:write')
  @ApiOperation({
    summary: "Change the calling user's name",
    description:
      "Sets `first_name` and `last_name` (the fields sent) of the key's own user, and answers as `GET " +
      '/api/users/@me`. The other fields of the user are read-only: sent back, they are ignored; an unknown ' +
      'field is a 400.',
  })
  @ApiOkResponse({ type: CurrentUserDto })
  @ApiBadRequestResponse({
    description: 'A name that is not a string or is too long, or an unknown field.',
    type: ErrorBodyDto,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateCurrentUserDto,
  ): Promise<CurrentUserDto> {
    return this.currentUser.update(principal, body);
  }
}
