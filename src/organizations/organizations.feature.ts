import { defineFeature } from '../common/feature/feature.js';
import { ORGANIZATIONS_SETTINGS } from './organizations.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    organization: true;
    organization_member: true;
  }
}

/** The organizations feature: what it contributes to the application, the database, the CLI and the tests. */
export const ORGANIZATIONS_FEATURE = defineFeature({
  name: 'organizations',
  e2e: ['organizations'],
  load: async () => ({
    modules: [(await import('./organizations.module.js')).OrganizationsModule],
    entities: [(await import('./organization.entity.js')).OrganizationEntity],
    migrations: [
      (await import('./migrations/1795240522298-Init.js')).Init1795240522298,
      (await import('./migrations/1795467478000-OrganizationSettings.js')).OrganizationSettings1795467478000,
      (await import('./migrations/1795500000000-NullableOrganizationSettings.js'))
        .NullableOrganizationSettings1795500000000,
      (await import('./migrations/1795948000000-BlankExperimentStatsMethod.js'))
        .BlankExperimentStatsMethod1795948000000,
    ],
  }),
  scopes: ['organization', 'organization_member'],
  settings: ORGANIZATIONS_SETTINGS,
});
