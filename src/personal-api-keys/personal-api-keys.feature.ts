import { defineFeature } from '../common/feature/feature.js';
import { PersonalApiKeyEntity } from './personal-api-key.entity.js';
import { PersonalApiKeysModule } from './personal-api-keys.module.js';

/** The personal api keys feature: what it contributes to the application, the database, the CLI and the tests. */
export const PERSONAL_API_KEYS_FEATURE = defineFeature({
  name: 'personal-api-keys',
  modules: [PersonalApiKeysModule],
  entities: [PersonalApiKeyEntity],
  settings: ['BOOTSTRAP_EMAIL'],
});
