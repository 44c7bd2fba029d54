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
  load: async () => ({
    modules: [(await import('./roles.module.js')).RolesModule],
    entities: [
      (await import('./role.entity.js')).RoleEntity,
      (await import('./role-membership.entity.js')).RoleMembershipEntity,
    ],
    migrations: [(await import('./migrations/1796000200000-RolesSchema.js')).RolesSchema1796000200000],
  }),
  testFixture: {
    async create({ request, organizationId }) {
      const created = await request<{ id: string }>('post', `/api/organizations/${organizationId}/roles`, {
        name: fixtureName(),
      });
      return { roles: created.id };
    },
    bodies: { RolesController_create: () => ({ name: fixtureName() }) },
  },
});
