import { defineFeature } from '../common/feature/feature.js';
import { PROJECTS_SETTINGS } from './projects.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    project: true;
  }
}

/** The projects feature: what it contributes to the application, the database, the CLI and the tests. */
export const PROJECTS_FEATURE = defineFeature({
  name: 'projects',
  e2e: ['projects-create-delete', 'project-deletion', 'environments'],
  load: async () => ({
    modules: [(await import('./projects.module.js')).ProjectsModule],
    entities: [(await import('./project.entity.js')).ProjectEntity],
    migrations: [
      (await import('./migrations/1795243816388-ProjectSessionRecordingOptIn.js'))
        .ProjectSessionRecordingOptIn1795243816388,
      (await import('./migrations/1795948100000-ProjectUpdatedAt.js')).ProjectUpdatedAt1795948100000,
      (await import('./migrations/1795948200000-ProjectExperimentStatsMethod.js'))
        .ProjectExperimentStatsMethod1795948200000,
      (await import('./migrations/1795970000000-ProjectSecretApiToken.js'))
        .ProjectSecretApiToken1795970000000,
      (await import('./migrations/1796000100000-ProjectDeletedAt.js')).ProjectDeletedAt1796000100000,
    ],
  }),
  scopes: ['project'],
  settings: PROJECTS_SETTINGS,
  tasks: [
    {
      name: 'project-deletion',
      interval: 'PROJECT_DELETION_INTERVAL_SECONDS',
      description:
        "Removes deleted projects' data (each feature's registered cleanup), then their rows; also at boot, and at " +
        'once after a deletion; one process at a time (0 turns it off).',
      handler: async () => (await import('./deletion/project-deletion.task.js')).ProjectDeletionTask,
      atBoot: true,
    },
  ],
  // PostHog serves its project routes under /api/environments/:id/ too (an environment is its "team", which a
  // project is here): every /api/projects/:id/… route of any feature answers there as well.
  routeAliases: [
    {
      under: '/api/projects',
      alias: '/api/environments',
      description:
        "PostHog's environment path: an environment is the project of the same id here (PostHog's team).",
    },
  ],
});
