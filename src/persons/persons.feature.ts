import { defineFeature } from '../common/feature/feature.js';

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
  settings: ['PERSON_SET_MAX_KEYS', 'PERSON_SET_MAX_BYTES', 'PERSON_PROPERTIES_MAX_BYTES'],
});
