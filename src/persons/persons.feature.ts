import { defineFeature } from '../common/feature/feature.js';
import { PersonDistinctIdEntity } from './person-distinct-id.entity.js';
import { PersonEntity } from './person.entity.js';
import { PersonsModule } from './persons.module.js';

/** The persons feature: what it contributes to the application, the database, the CLI and the tests. */
export const PERSONS_FEATURE = defineFeature({
  name: 'persons',
  modules: [PersonsModule],
  entities: [PersonEntity, PersonDistinctIdEntity],
});
