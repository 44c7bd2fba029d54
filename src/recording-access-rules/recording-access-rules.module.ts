import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesController } from './recording-access-rules.controller.js';
import { RecordingAccessRulesRepository } from './recording-access-rules.repository.js';
import { RecordingAccessRulesService } from './recording-access-rules.service.js';
import { RecordingVisibilityService } from './recording-visibility.service.js';

/**
 * Recording access rules of a project (their API) and what they hide from whom (`RecordingVisibilityService`,
 * used by every feature that reads recordings).
 */
@Module({
  imports: [ProjectsModule],
  controllers: [RecordingAccessRulesController],
  providers: [RecordingAccessRulesRepository, RecordingAccessRulesService, RecordingVisibilityService],
  exports: [RecordingVisibilityService],
})
export class RecordingAccessRulesModule {}
