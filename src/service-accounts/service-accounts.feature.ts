import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { SERVICE_ACCOUNTS_COMMANDS, SERVICE_ACCOUNTS_GROUP } from './service-accounts.cli.js';

/** The service accounts feature: what it contributes to the application, the database, the CLI and the tests. */
export const SERVICE_ACCOUNTS_FEATURE = defineFeature({
  name: 'service-accounts',
  e2e: ['service-accounts'],
  load: async () => ({
    modules: [(await import('./service-accounts.module.js')).ServiceAccountsModule],
    entities: [(await import('./service-account.entity.js')).ServiceAccountEntity],
    migrations: [
      (await import('./migrations/1796000610000-ServiceAccounts.js')).ServiceAccounts1796000610000,
    ],
  }),
  cliGroups: [SERVICE_ACCOUNTS_GROUP],
  cli: SERVICE_ACCOUNTS_COMMANDS,
  testFixture: {
    async create({ request, organizationId }) {
      const created = await request<{ id: string; key: { id: string } }>(
        'post',
        `/api/organizations/${organizationId}/service_accounts`,
        { name: fixtureText('service account '), scopes: ['organization:read'] },
      );
      return { service_accounts: created.id, key_id: created.key.id };
    },
    bodies: {
      ServiceAccountsController_create: () => ({
        name: fixtureText('service account '),
        scopes: ['organization:read'],
      }),
    },
  },
});
