import { defineFeature } from '../common/feature/feature.js';
import { PERSONS_SETTINGS } from './persons.settings.js';

/** The persons feature: what it contributes to the application, the database, the CLI and the tests. */
export const PERSONS_FEATURE = defineFeature({
  name: 'persons',
  load: async () => ({
    modules: [(await import('./persons.module.js')).PersonsModule],
    entities: [
      (await import('./person.entity.js')).PersonEntity,
      (await import('./person-distinct-id.entity.js')).PersonDistinctIdEntity,
    ],
  }),
  settings: PERSONS_SETTINGS,
});
