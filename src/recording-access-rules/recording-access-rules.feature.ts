import { randomUUID } from 'node:crypto';
import { defineFeature, type FeatureFixtureTenant } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    recording_access_rule: true;
  }
}

/**
 * A rule of the tests' tenants: a start URL pattern no recording has (so it hides nothing from anyone), naming
 * the tenant's role when the roles fixture made one.
 */
const fixtureRule = ({ ids }: Pick<FeatureFixtureTenant, 'ids'>) => ({
  kind: 'start_url',
  url_pattern: `https://fixture-${randomUUID().slice(0, 8)}.invalid/*`,
  role_ids: typeof ids.roles === 'string' ? [ids.roles] : [],
});

/**
 * The recording access rules feature (docs/recordings.md, "Who may watch"): rules restricting who may watch a
 * project's recordings to roles, and what they hide from whom (`RecordingVisibilityService`), which the features
 * reading recordings ask.
 */
export const RECORDING_ACCESS_RULES_FEATURE = defineFeature({
  name: 'recording-access-rules',
  e2e: ['recording-access-rules', 'recording-access-enforcement'],
  load: async () => ({
    modules: [(await import('./recording-access-rules.module.js')).RecordingAccessRulesModule],
    entities: [
      (await import('./recording-access-rule.entity.js')).RecordingAccessRuleEntity,
      (await import('./recording-access-rule.entity.js')).RecordingAccessRuleRoleEntity,
    ],
    migrations: [
      (await import('./migrations/1796000400000-RecordingAccessRules.js')).RecordingAccessRules1796000400000,
    ],
  }),
  scopes: ['recording_access_rule'],
  testFixture: {
    async create(tenant) {
      const created = await tenant.request<{ id: string }>(
        'post',
        `/api/projects/${tenant.projectId}/recording_access_rules`,
        fixtureRule(tenant),
      );
      return { recording_access_rules: created.id };
    },
    bodies: {
      RecordingAccessRulesController_create: fixtureRule,
      RecordingAccessRulesController_update: fixtureRule,
    },
  },
});
