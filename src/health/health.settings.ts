import { int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the health feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const HEALTH_SETTINGS = {
  SHUTDOWN_TIMEOUT_MS: setting(
    int(0, 600000),
    10000,
    'How long the whole drain after SIGTERM may take (including SHUTDOWN_DELAY_MS); requests still running then are answered 503 and the process exits 1.',
  ),
  SHUTDOWN_DELAY_MS: setting(
    int(0, 600000),
    0,
    'After SIGTERM, keep accepting requests this long while /readyz answers 503, so load balancers stop routing before the listener closes.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof HEALTH_SETTINGS> {}
}
