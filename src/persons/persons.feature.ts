import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { PERSONS_SETTINGS } from './persons.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    person: true;
  }
}

/** The persons feature: what it contributes to the application, the database, the CLI and the tests. */
export const PERSONS_FEATURE = defineFeature({
  name: 'persons',
  e2e: ['persons', 'person-limits'],
  load: async () => ({
    // What batch exports can export of it (src/stores/export-model.ts).
    exportModels: [(await import('./persons-export.js')).PERSONS_MODEL],
    modules: [(await import('./persons.module.js')).PersonsModule],
    entities: [
      (await import('./person.entity.js')).PersonEntity,
      (await import('./person-distinct-id.entity.js')).PersonDistinctIdEntity,
    ],
    migrations: [
      (await import('./migrations/1795962340000-PersonsIsIdentified.js')).PersonsIsIdentified1795962340000,
    ],
  }),
  scopes: ['person'],
  settings: PERSONS_SETTINGS,
  testFixture: {
    // A person identified through /e/ (an anonymous id and a known one): its uuid is the path's {id}.
    async create({ request, apiToken, now, projectId }) {
      const distinctId = fixtureText('person-');
      await request(
        'post',
        '/e/',
        {
          api_key: apiToken,
          event: '$identify',
          distinct_id: distinctId,
          timestamp: now.toISOString(),
          properties: {
            $anon_distinct_id: fixtureText('anon-'),
            $set: { email: `${distinctId}@example.com` },
          },
        },
        { public: true },
      );
      const page = await request<{ results: { id: string }[] }>(
        'get',
        `/api/projects/${projectId}/persons/?distinct_id=${distinctId}`,
      );
      return { persons: page.results[0].id };
    },
  },
});
