import { defineFeature } from '../common/feature/feature.js';
import { CurrentUserModule } from './current-user.module.js';
import { UserEntity } from './user.entity.js';

/** The users feature: what it contributes to the application, the database, the CLI and the tests. */
export const USERS_FEATURE = defineFeature({
  name: 'users',
  modules: [CurrentUserModule],
  entities: [UserEntity],
});
