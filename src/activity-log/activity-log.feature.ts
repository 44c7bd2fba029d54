import { defineFeature } from '../common/feature/feature.js';
import { ACTIVITY_LOG_SETTINGS } from './activity-log.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    activity_log: true;
  }
}

/**
 * The activity log feature: who did and saw what (every API and CLI write, every read of a recording), at
 * PostHog's `activity_log` paths, append-only, pruned after ACTIVITY_LOG_RETENTION_DAYS, exported by the
 * `activity_log` batch export model.
 */
export const ACTIVITY_LOG_FEATURE = defineFeature({
  name: 'activity-log',
  e2e: ['activity-log'],
  load: async () => ({
    // What batch exports can export of it (src/stores/export-model.ts).
    exportModels: [(await import('./activity-log-export.js')).ACTIVITY_LOG_MODEL],
    modules: [(await import('./activity-log.module.js')).ActivityLogModule],
    entities: [(await import('./activity-log.entity.js')).ActivityLogEntity],
    migrations: [
      (await import('./migrations/1796200000000-ActivityLogs.js')).ActivityLogs1796200000000,
      (await import('./migrations/1797300000000-ActivityChangesCapture.js'))
        .ActivityChangesCapture1797300000000,
    ],
  }),
  scopes: ['activity_log'],
  settings: ACTIVITY_LOG_SETTINGS,
  // After the current references (10): a write's entry names the ids `@current` stood for.
  interceptors: [
    {
      name: 'activity-log',
      order: 20,
      handler: async () => (await import('./activity-log.interceptor.js')).ActivityLogInterceptor,
    },
  ],
  tasks: [
    {
      name: 'activity-log-prune',
      interval: 'ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS',
      description: 'Deletes activity log entries older than ACTIVITY_LOG_RETENTION_DAYS (0 turns it off).',
      handler: async () => (await import('./activity-log-prune.task.js')).ActivityLogPruneTask,
      jitterSeconds: 60,
    },
  ],
});
