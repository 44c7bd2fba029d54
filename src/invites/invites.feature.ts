import { defineFeature } from '../common/feature/feature.js';
import { MembersInvites1795241523230 } from '../database/migrations/1795241523230-MembersInvites.js';
import { InviteEntity } from './invite.entity.js';
import { InvitesModule } from './invites.module.js';

/** The invites feature: what it contributes to the application, the database, the CLI and the tests. */
export const INVITES_FEATURE = defineFeature({
  name: 'invites',
  modules: [InvitesModule],
  entities: [InviteEntity],
  migrations: [MembersInvites1795241523230],
  settings: ['INVITE_DAYS_VALIDITY', 'SMTP_URL', 'SMTP_FROM', 'SMTP_TIMEOUT_MS', 'PUBLIC_URL'],
});
