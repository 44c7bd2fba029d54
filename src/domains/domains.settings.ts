import { dnsServers, int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the domains feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const DOMAINS_SETTINGS = {
  DNS_SERVERS: setting<string[] | null>(
    dnsServers,
    null,
    'DNS servers that domain verification asks for TXT records: a comma list of ip or ip:port. Unset: the system resolvers.',
  ),
  DNS_TIMEOUT_MS: setting(
    int(100, 60000),
    3000,
    'How long one domain verification waits for DNS answers in total.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof DOMAINS_SETTINGS> {}
}
