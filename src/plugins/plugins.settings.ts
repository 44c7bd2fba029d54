import { httpUrl, int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the plugins feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const PLUGINS_SETTINGS = {
  PLUGIN_REPOSITORY_URL: setting<string | null>(
    httpUrl,
    null,
    'URL of the plugin repository catalog (a JSON list of plugins). Unset: the catalog shipped with the service.',
  ),
  PLUGIN_REPOSITORY_TIMEOUT_MS: setting(
    int(100, 120000),
    5000,
    'How long a fetch of PLUGIN_REPOSITORY_URL may take; past it the request answers 504.',
  ),
  PLUGIN_REPOSITORY_CACHE_SECONDS: setting(
    int(0, 86400),
    300,
    'Seconds a fetched plugin repository catalog is reused (0: fetched on every use).',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof PLUGINS_SETTINGS> {}
}
