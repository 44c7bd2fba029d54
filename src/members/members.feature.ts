import { defineFeature } from '../common/feature/feature.js';
import { MembersModule } from './members.module.js';

/** The members feature: what it contributes to the application, the database, the CLI and the tests. */
export const MEMBERS_FEATURE = defineFeature({
  name: 'members',
  modules: [MembersModule],
});
