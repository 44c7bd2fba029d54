import { defineFeature } from '../common/feature/feature.js';
import { SCIM_SETTINGS } from './scim.settings.js';

/**
 * SCIM 2.0 provisioning (docs/api.md, "SCIM"): an organization's identity provider provisions and deprovisions
 * its people on a verified domain at /scim/v2/:domain_id/, with the domain's SCIM token; and the SCIM request log
 * its admins read.
 */
export const SCIM_FEATURE = defineFeature({
  name: 'scim',
  e2e: ['scim-entra-validator', 'scim-okta-spec-test', 'scim-security'],
  load: async () => ({
    modules: [(await import('./scim.module.js')).ScimModule],
    entities: [
      (await import('./scim-identity.entity.js')).ScimIdentityEntity,
      (await import('./scim-request-log.entity.js')).ScimRequestLogEntity,
    ],
    migrations: [(await import('./migrations/1796100000001-Scim.js')).Scim1796100000001],
  }),
  settings: SCIM_SETTINGS,
  tasks: [
    {
      name: 'scim-log-purge',
      interval: 'SCIM_LOG_PURGE_INTERVAL_SECONDS',
      description:
        'Deletes SCIM request log entries older than SCIM_LOG_RETENTION_DAYS, in batches; also once at boot (0 turns it off).',
      handler: async () => (await import('./scim-log-purge.task.js')).ScimLogPurgeTask,
      atBoot: true,
    },
  ],
});
