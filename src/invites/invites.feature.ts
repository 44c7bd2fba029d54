import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { INVITES_SETTINGS } from './invites.settings.js';

/** An invite to an address no other test uses, sent by no e-mail. */
const fixtureInvite = () => ({ target_email: `${fixtureText('invitee')}@example.com`, send_email: false });

/** The invites feature: what it contributes to the application, the database, the CLI and the tests. */
export const INVITES_FEATURE = defineFeature({
  name: 'invites',
  e2e: ['invites', 'invites-email', 'invites-races'],
  load: async () => ({
    modules: [(await import('./invites.module.js')).InvitesModule],
    entities: [(await import('./invite.entity.js')).InviteEntity],
    migrations: [(await import('./migrations/1795241523230-MembersInvites.js')).MembersInvites1795241523230],
  }),
  settings: INVITES_SETTINGS,
  testFixture: {
    async create({ request, organizationId }) {
      const invite = await request<{ id: string }>(
        'post',
        `/api/organizations/${organizationId}/invites`,
        fixtureInvite(),
      );
      return { invites: invite.id };
    },
    bodies: {
      InvitesController_create: fixtureInvite,
      InvitesController_bulk: () => [fixtureInvite(), fixtureInvite()],
    },
  },
});
