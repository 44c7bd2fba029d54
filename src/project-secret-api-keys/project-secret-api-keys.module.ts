import { Module } from '@nestjs/common';
import { PROJECT_SECRET_VERIFIER } from '../common/auth/principal.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { ProjectSecretApiKeysController } from './project-secret-api-keys.controller.js';
import { ProjectSecretApiKeysRepository } from './project-secret-api-keys.repository.js';
import { ProjectSecretApiKeysService } from './project-secret-api-keys.service.js';

/**
 * Project secret API keys; provides the verifier the global guard authenticates `phs_` secrets with (the keys,
 * and the projects' own secret tokens).
 */
@Module({
  imports: [ProjectsModule],
  controllers: [ProjectSecretApiKeysController],
  providers: [
    ProjectSecretApiKeysRepository,
    ProjectSecretApiKeysService,
    { provide: PROJECT_SECRET_VERIFIER, useExisting: ProjectSecretApiKeysService },
  ],
  exports: [ProjectSecretApiKeysService, PROJECT_SECRET_VERIFIER],
})
export class ProjectSecretApiKeysModule {}
