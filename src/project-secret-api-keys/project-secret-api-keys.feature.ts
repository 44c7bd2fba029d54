import { fixtureText, defineFeature } from '../common/feature/feature.js';
import { PROJECT_KEYS_COMMANDS, PROJECT_KEYS_GROUP } from './project-secret-api-keys.cli.js';

/** The project secret API keys feature: what it contributes to the application, the database, the CLI and the tests. */
export const PROJECT_SECRET_API_KEYS_FEATURE = defineFeature({
  name: 'project-secret-api-keys',
  e2e: ['project-secret-api-keys'],
  load: async () => ({
    modules: [(await import('./project-secret-api-keys.module.js')).ProjectSecretApiKeysModule],
    entities: [(await import('./project-secret-api-key.entity.js')).ProjectSecretApiKeyEntity],
    migrations: [
      (await import('./migrations/1796000600000-ProjectSecretApiKeys.js')).ProjectSecretApiKeys1796000600000,
    ],
  }),
  cliGroups: [PROJECT_KEYS_GROUP],
  cli: PROJECT_KEYS_COMMANDS,
  testFixture: {
    async create({ request, projectId }) {
      const created = await request<{ id: string }>(
        'post',
        `/api/projects/${projectId}/project_secret_api_keys`,
        {
          label: fixtureText('key '),
          scopes: ['feature_flag:read'],
        },
      );
      return { project_secret_api_keys: created.id };
    },
    bodies: {
      ProjectSecretApiKeysController_create: () => ({
        label: fixtureText('key '),
        scopes: ['feature_flag:read'],
      }),
    },
  },
});
