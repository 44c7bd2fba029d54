import { int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the projects feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts, documented in docs/configuration.md and .env.example.
 */
export const PROJECTS_SETTINGS = {
  PROJECT_DELETION_INTERVAL_SECONDS: setting(
    int(0, 86400),
    60,
    "Seconds between two passes of the project deletion task, which removes deleted projects' data (a deletion also starts a pass at once in the process that took it, and every process runs one at boot); 0: none in this process. One process at a time works (an advisory lock); a pass resumes what an interrupted one left.",
  ),
  PROJECT_DELETION_BATCH_SIZE: setting(
    int(1, 100000),
    1000,
    'Most rows (recordings, events, persons, …) of a deleted project one transaction of the project deletion task removes.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof PROJECTS_SETTINGS> {}
}
