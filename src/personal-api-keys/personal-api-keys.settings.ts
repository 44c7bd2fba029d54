import { email, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the personal-api-keys feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const PERSONAL_API_KEYS_SETTINGS = {
  BOOTSTRAP_EMAIL: setting(
    email,
    'admin@localhost',
    'E-mail of the user created with a `*` key on an empty embedded database (with DATABASE_URL no key is created: use `npm run cli -- keys create`).',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof PERSONAL_API_KEYS_SETTINGS> {}
}
