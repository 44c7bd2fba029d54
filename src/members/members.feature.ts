import { defineFeature } from '../common/feature/feature.js';

/** The members feature: what it contributes to the application, the database, the CLI and the tests. */
export const MEMBERS_FEATURE = defineFeature({
  name: 'members',
  e2e: ['members'],
  load: async () => ({
    modules: [(await import('./members.module.js')).MembersModule],
  }),
  testFixture: {
    // A member besides the owner, whose membership the member routes change.
    create: async ({ addMember }) => ({ user__uuid: await addMember() }),
  },
});
