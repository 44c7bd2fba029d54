import { defineFeature } from '../common/feature/feature.js';
import { INVITES_SETTINGS } from './invites.settings.js';

/** The invites feature: what it contributes to the application, the database, the CLI and the tests. */
export const INVITES_FEATURE = defineFeature({
  name: 'invites',
  load: async () => ({
    modules: [(await import('./invites.module.js')).InvitesModule],
    entities: [(await import('./invite.entity.js')).InviteEntity],
    migrations: [
      (await import('../database/migrations/1795241523230-MembersInvites.js')).MembersInvites1795241523230,
    ],
  }),
  settings: INVITES_SETTINGS,
});
