import { int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/** The settings of the activity log, declared by its manifest (docs/configuration.md, .env.example). */
export const ACTIVITY_LOG_SETTINGS = {
  ACTIVITY_LOG_RETENTION_DAYS: setting(
    int(1, 36500),
    365,
    'Days an activity log entry is kept; older entries are deleted by the `activity-log-prune` task (the only deletion the table allows).',
  ),
  ACTIVITY_LOG_PRUNE_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two prunes of activity log entries older than ACTIVITY_LOG_RETENTION_DAYS in this process; 0: no prune here. Safe on every replica.',
  ),
  ACTIVITY_LOG_CSV_MAX_ROWS: setting(
    int(1, 1000000),
    100000,
    'Most entries one CSV export of the activity log holds (the newest first); narrow the date range for more.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof ACTIVITY_LOG_SETTINGS> {}
}
