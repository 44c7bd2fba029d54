import { str, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the organizations feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const ORGANIZATIONS_SETTINGS = {
  INSTANCE_TAG: setting(str, 'none', 'Instance tag reported in Organization.metadata.'),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof ORGANIZATIONS_SETTINGS> {}
}
