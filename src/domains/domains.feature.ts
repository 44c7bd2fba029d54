import { randomUUID } from 'node:crypto';
import { defineFeature } from '../common/feature/feature.js';
import { DOMAINS_SETTINGS } from './domains.settings.js';

/** A domain name no other test uses. */
const fixtureDomain = () => `d-${randomUUID().slice(0, 13)}.example.com`;

/** The domains feature: what it contributes to the application, the database, the CLI and the tests. */
export const DOMAINS_FEATURE = defineFeature({
  name: 'domains',
  e2e: ['domains'],
  load: async () => ({
    modules: [(await import('./domains.module.js')).DomainsModule],
    entities: [(await import('./domain.entity.js')).DomainEntity],
    migrations: [
      (await import('./migrations/1795241288204-Domains.js')).Domains1795241288204,
      (await import('./migrations/1796100000000-DomainScim.js')).DomainScim1796100000000,
    ],
  }),
  settings: DOMAINS_SETTINGS,
  testFixture: {
    async create({ request, organizationId }) {
      const domain = await request<{ id: string }>('post', `/api/organizations/${organizationId}/domains`, {
        domain: fixtureDomain(),
      });
      return { domains: domain.id };
    },
    bodies: { DomainsController_create: () => ({ domain: fixtureDomain() }) },
  },
});
