import { defineFeature } from '../common/feature/feature.js';
import { MembershipProjectAccessEntity } from './membership-project-access.entity.js';
import { MembershipsModule } from './memberships.module.js';
import { OrganizationMembershipEntity } from './organization-membership.entity.js';

/** The memberships feature: what it contributes to the application, the database, the CLI and the tests. */
export const MEMBERSHIPS_FEATURE = defineFeature({
  name: 'memberships',
  modules: [MembershipsModule],
  entities: [OrganizationMembershipEntity, MembershipProjectAccessEntity],
});
