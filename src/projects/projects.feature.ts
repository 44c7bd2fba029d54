import { defineFeature } from '../common/feature/feature.js';
import { ProjectSessionRecordingOptIn1795243816388 } from '../database/migrations/1795243816388-ProjectSessionRecordingOptIn.js';
import { ProjectEntity } from './project.entity.js';
import { ProjectsModule } from './projects.module.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    project: true;
  }
}

/** The projects feature: what it contributes to the application, the database, the CLI and the tests. */
export const PROJECTS_FEATURE = defineFeature({
  name: 'projects',
  modules: [ProjectsModule],
  entities: [ProjectEntity],
  migrations: [ProjectSessionRecordingOptIn1795243816388],
  scopes: ['project'],
});
