import { int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the SCIM feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const SCIM_SETTINGS = {
  SCIM_LOG_RETENTION_DAYS: setting(
    int(1, 3650),
    180,
    'Days a SCIM request log entry (`GET /api/organizations/:organization_id/domains/:id/scim/logs/`) is kept; older entries are deleted by the `scim-log-purge` task.',
  ),
  SCIM_LOG_PURGE_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two runs of the `scim-log-purge` task in this process (also once at boot); 0: not in this process. Safe on every replica.',
  ),
  SCIM_RATE_LIMIT_PER_MINUTE: setting(
    int(0, 1000000),
    600,
    'Most SCIM requests one SCIM token may make in any 60 seconds (429 beyond, with Retry-After); counted in Redis when REDIS_URL is set (every replica together), else per process; 0: no limit.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof SCIM_SETTINGS> {}
}
