import { randomUUID } from 'node:crypto';
import { defineFeature } from '../common/feature/feature.js';

/** A role name no other test uses. */
const fixtureName = () => `role ${randomUUID().slice(0, 8)}`;

/**
 * The roles feature: roles of an organization and their members. Its routes take the `organization` scope, as
 * PostHog's (docs/decisions.md).
 */
export const ROLES_FEATURE = defineFeature({
  name: 'roles',
  e2e: ['roles'],
  load: async () => ({
    modules: [(await import('./roles.module.js')).RolesModule],
    entities: [
      (await import('./role.entity.js')).RoleEntity,
      (await import('./role-membership.entity.js')).RoleMembershipEntity,
    ],
    migrations: [
      (await import('./migrations/1796000200000-RolesSchema.js')).RolesSchema1796000200000,
      (await import('./migrations/1797300000001-RoleScimExternalId.js')).RoleScimExternalId1797300000001,
    ],
  }),
  testFixture: {
    // A role with one member, and another member of the organization not in it (the body of a new membership).
    async create({ request, organizationId, addMember }) {
      const roles = `/api/organizations/${organizationId}/roles`;
      const role = await request<{ id: string }>('post', roles, { name: fixtureName() });
      const membership = await request<{ id: string }>('post', `${roles}/${role.id}/role_memberships`, {
        user_uuid: await addMember(),
      });
      return {
        roles: role.id,
        role_id: role.id,
        role_memberships: membership.id,
        role_candidate_uuid: await addMember(),
      };
    },
    bodies: {
      RolesController_create: () => ({ name: fixtureName() }),
      RolesController_update: () => ({ name: fixtureName() }),
      RolesController_replace: () => ({ name: fixtureName() }),
      RoleMembershipsController_create: ({ ids }) => ({ user_uuid: ids.role_candidate_uuid }),
    },
  },
});
