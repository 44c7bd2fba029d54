import { defineFeature } from '../common/feature/feature.js';
import { Init1795240522298 } from '../database/migrations/1795240522298-Init.js';
import { OrganizationSettings1795467478000 } from '../database/migrations/1795467478000-OrganizationSettings.js';
import { OrganizationEntity } from './organization.entity.js';
import { OrganizationsModule } from './organizations.module.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    organization: true;
    organization_member: true;
  }
}

/** The organizations feature: what it contributes to the application, the database, the CLI and the tests. */
export const ORGANIZATIONS_FEATURE = defineFeature({
  name: 'organizations',
  modules: [OrganizationsModule],
  entities: [OrganizationEntity],
  migrations: [Init1795240522298, OrganizationSettings1795467478000],
  scopes: ['organization', 'organization_member'],
  settings: ['INSTANCE_TAG'],
});
