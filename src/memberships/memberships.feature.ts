import { defineFeature } from '../common/feature/feature.js';

/** The memberships feature: what it contributes to the application, the database, the CLI and the tests. */
export const MEMBERSHIPS_FEATURE = defineFeature({
  name: 'memberships',
  load: async () => ({
    modules: [(await import('./memberships.module.js')).MembershipsModule],
    entities: [
      (await import('./organization-membership.entity.js')).OrganizationMembershipEntity,
      (await import('./access-control.entity.js')).AccessControlEntity,
    ],
    migrations: [(await import('./migrations/1796000300000-AccessControls.js')).AccessControls1796000300000],
  }),
});
