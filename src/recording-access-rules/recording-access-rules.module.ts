import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesController } from './recording-access-rules.controller.js';
import { RecordingAccessRulesRepository } from './recording-access-rules.repository.js';
import { RecordingAccessRulesService } from './recording-access-rules.service.js';

/** RecordingAccessRules of a project. */
@Module({
  imports: [ProjectsModule],
  controllers: [RecordingAccessRulesController],
  providers: [RecordingAccessRulesRepository, RecordingAccessRulesService],
  exports: [RecordingAccessRulesService],
})
export class RecordingAccessRulesModule {}
