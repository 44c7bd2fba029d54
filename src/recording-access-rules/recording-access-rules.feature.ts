import { randomUUID } from 'node:crypto';
import { defineFeature } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    recording_access_rule: true;
  }
}

/** A recording access rule name no other test uses. */
const fixtureName = () => `recording access rule ${randomUUID().slice(0, 8)}`;

/** The recording access rules feature: what it contributes to the application, the database and the tests. */
export const RECORDING_ACCESS_RULES_FEATURE = defineFeature({
  name: 'recording-access-rules',
  load: async () => ({
    modules: [(await import('./recording-access-rules.module.js')).RecordingAccessRulesModule],
    entities: [(await import('./recording-access-rule.entity.js')).RecordingAccessRuleEntity],
    migrations: [
      (await import('./migrations/1795948877888-CreateRecordingAccessRules.js'))
        .CreateRecordingAccessRules1795948877888,
    ],
  }),
  scopes: ['recording_access_rule'],
  testFixture: {
    async create({ request, projectId }) {
      const created = await request<{ id: string }>(
        'post',
        `/api/projects/${projectId}/recording_access_rules`,
        {
          name: fixtureName(),
        },
      );
      return { recording_access_rules: created.id };
    },
    bodies: { RecordingAccessRulesController_create: () => ({ name: fixtureName() }) },
  },
  // A scheduled task, when the feature needs one: a provider of its module extending IntervalTask
  // (common/tasks/interval-task.ts; `run` does one tick and logs its own failures), its interval in seconds a
  // setting of recording-access-rules.settings.ts (0 turns it off). The task runner starts it on every replica; work that one
  // replica at a time must do takes an advisory lock in `run`. docs/configuration.md lists it.
  // tasks: [
  //   {
  //     name: 'recording-access-rules-cleanup',
  //     interval: 'RECORDING_ACCESS_RULES_CLEANUP_SECONDS',
  //     description: 'Deletes the recording access rules past their retention (0 turns it off).',
  //     handler: async () => (await import('./recording-access-rules-cleanup.task.js')).RecordingAccessRulesCleanupTask,
  //   },
  // ],
});
