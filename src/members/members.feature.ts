import { defineFeature } from '../common/feature/feature.js';

/** The members feature: what it contributes to the application, the database, the CLI and the tests. */
export const MEMBERS_FEATURE = defineFeature({
  name: 'members',
  load: async () => ({
    modules: [(await import('./members.module.js')).MembersModule],
  }),
});
