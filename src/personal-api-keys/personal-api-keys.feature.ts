import { defineFeature } from '../common/feature/feature.js';
import { KEYS_COMMANDS, KEYS_GROUP } from './personal-api-keys.cli.js';
import { PERSONAL_API_KEYS_SETTINGS } from './personal-api-keys.settings.js';

/** The personal api keys feature: what it contributes to the application, the database, the CLI and the tests. */
export const PERSONAL_API_KEYS_FEATURE = defineFeature({
  name: 'personal-api-keys',
  load: async () => ({
    modules: [(await import('./personal-api-keys.module.js')).PersonalApiKeysModule],
    entities: [(await import('./personal-api-key.entity.js')).PersonalApiKeyEntity],
  }),
  settings: PERSONAL_API_KEYS_SETTINGS,
  cliGroups: [KEYS_GROUP],
  cli: KEYS_COMMANDS,
});
