import { defineFeature } from '../common/feature/feature.js';
import { Domains1795241288204 } from '../database/migrations/1795241288204-Domains.js';
import { DomainEntity } from './domain.entity.js';
import { DomainsModule } from './domains.module.js';

/** The domains feature: what it contributes to the application, the database, the CLI and the tests. */
export const DOMAINS_FEATURE = defineFeature({
  name: 'domains',
  modules: [DomainsModule],
  entities: [DomainEntity],
  migrations: [Domains1795241288204],
  settings: ['DNS_SERVERS', 'DNS_TIMEOUT_MS'],
});
