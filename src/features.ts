import { ACTIVITY_LOG_FEATURE } from './activity-log/activity-log.feature.js';
import { ACCESS_CONTROLS_FEATURE } from './access-controls/access-controls.feature.js';
import { BATCH_EXPORTS_FEATURE } from './batch-exports/batch-exports.feature.js';
import { CAPTURE_FEATURE } from './capture/capture.feature.js';
import { DATABASE_FEATURE } from './database/database.feature.js';
import { DOMAINS_FEATURE } from './domains/domains.feature.js';
import { EVENTS_FEATURE } from './events/events.feature.js';
import { INGEST_FEATURE } from './ingest/ingest.feature.js';
import { HEALTH_FEATURE } from './health/health.feature.js';
import { INVITES_FEATURE } from './invites/invites.feature.js';
import { MEMBERS_FEATURE } from './members/members.feature.js';
import { MEMBERSHIPS_FEATURE } from './memberships/memberships.feature.js';
import { ORGANIZATIONS_FEATURE } from './organizations/organizations.feature.js';
import { PERSONAL_API_KEYS_FEATURE } from './personal-api-keys/personal-api-keys.feature.js';
import { PERSONS_FEATURE } from './persons/persons.feature.js';
import { PLUGINS_FEATURE } from './plugins/plugins.feature.js';
import { PROJECTS_FEATURE } from './projects/projects.feature.js';
import { RECORDING_ACCESS_RULES_FEATURE } from './recording-access-rules/recording-access-rules.feature.js';
import { ROLES_FEATURE } from './roles/roles.feature.js';
import { PROJECT_SECRET_API_KEYS_FEATURE } from './project-secret-api-keys/project-secret-api-keys.feature.js';
import { REPLAY_FEATURE } from './replay/replay.feature.js';
import { SCIM_FEATURE } from './scim/scim.feature.js';
import { SDK_FEATURE } from './sdk/sdk.feature.js';
import { SERVICE_ACCOUNTS_FEATURE } from './service-accounts/service-accounts.feature.js';
import { SESSION_RECORDING_PLAYLISTS_FEATURE } from './session-recording-playlists/session-recording-playlists.feature.js';
import { SESSION_RECORDINGS_FEATURE } from './session-recordings/session-recordings.feature.js';
import { USERS_FEATURE } from './users/users.feature.js';
import { registerScopeObjects } from './common/auth/scopes.js';
import { registerFeatureSettings } from './config/config.js';
import { checkFeatures, type Feature, type LoadedFeature, loadFeatures } from './common/feature/feature.js';

/**
 * The features of the service, in the order their routes are registered. A new feature is one folder with its
 * `<name>.feature.ts` and one line here; a host application passes its own list (`[...FEATURES, extra]`) to
 * `AppModule.forRoot(config, await loadFeatures(features))`.
 */
export const FEATURES: readonly Feature[] = [
  DATABASE_FEATURE,
  HEALTH_FEATURE,
  PERSONAL_API_KEYS_FEATURE,
  USERS_FEATURE,
  MEMBERSHIPS_FEATURE,
  ORGANIZATIONS_FEATURE,
  ROLES_FEATURE,
  PROJECTS_FEATURE,
  PROJECT_SECRET_API_KEYS_FEATURE,
  ACCESS_CONTROLS_FEATURE,
  DOMAINS_FEATURE,
  SCIM_FEATURE,
  MEMBERS_FEATURE,
  SERVICE_ACCOUNTS_FEATURE,
  INVITES_FEATURE,
  BATCH_EXPORTS_FEATURE,
  PLUGINS_FEATURE,
  PERSONS_FEATURE,
  SESSION_RECORDINGS_FEATURE,
  SESSION_RECORDING_PLAYLISTS_FEATURE,
  RECORDING_ACCESS_RULES_FEATURE,
  REPLAY_FEATURE,
  INGEST_FEATURE,
  CAPTURE_FEATURE,
  EVENTS_FEATURE,
  ACTIVITY_LOG_FEATURE,
  SDK_FEATURE,
];

/**
 * Registers what must be known before the first request: the features' scope objects, and their settings (the
 * table `AppConfig.fromEnv` parses by default).
 */
export function registerFeatures(features: readonly Feature[]): readonly Feature[] {
  checkFeatures(features);
  for (const feature of features) registerScopeObjects(feature.scopes ?? []);
  registerFeatureSettings(features);
  return features;
}

registerFeatures(FEATURES);

/** The service's features with their modules, entities and migrations loaded. */
export function loadServiceFeatures(): Promise<LoadedFeature[]> {
  return loadFeatures(FEATURES);
}
