import { Module } from '@nestjs/common';
import { API_KEY_VERIFIER } from '../common/auth/principal.js';
import { UsersModule } from '../users/users.module.js';
import { BootstrapKeyService } from './bootstrap-key.js';
import { PersonalApiKeysController } from './personal-api-keys.controller.js';
import { PersonalApiKeysRepository } from './personal-api-keys.repository.js';
import { PersonalApiKeysService } from './personal-api-keys.service.js';

/** Personal API keys; provides the verifier the global guard authenticates requests with. */
@Module({
  imports: [UsersModule],
  controllers: [PersonalApiKeysController],
  providers: [
    PersonalApiKeysRepository,
    PersonalApiKeysService,
    BootstrapKeyService,
    { provide: API_KEY_VERIFIER, useExisting: PersonalApiKeysService },
  ],
  exports: [PersonalApiKeysService, BootstrapKeyService, API_KEY_VERIFIER],
})
export class PersonalApiKeysModule {}
