import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScopes } from '../common/auth/auth.decorators.js';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { PersonalApiKeyDto, toPersonalApiKeyDto } from './dto/personal-api-key.dto.js';
import { PersonalApiKeysService } from './personal-api-keys.service.js';

@ApiTags('personal api keys')
@Controller('api/personal_api_keys')
export class PersonalApiKeysController {
  constructor(private readonly keys: PersonalApiKeysService) {}

  @Get('@current')
  @RequireScopes()
  @ApiOperation({ summary: 'The key making this request', description: 'Any valid key, no scope needed.' })
  @ApiOkResponse({ type: PersonalApiKeyDto })
  async current(@CurrentPrincipal() principal: Principal): Promise<PersonalApiKeyDto> {
    const key = await this.keys.findById(principal.keyId);
    if (!key) throw ApiError.authenticationFailed();
    return toPersonalApiKeyDto(key);
  }
}
