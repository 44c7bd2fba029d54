import {
  httpUrl,
  int,
  mailbox,
  smtpUrl,
  setting,
  type SettingsTable,
  type SettingValues,
} from '../config/settings.js';

/**
 * The settings of the invites feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const INVITES_SETTINGS = {
  INVITE_DAYS_VALIDITY: setting(
    int(1, 365),
    3,
    'Days after which an invite expires (`is_expired`); an expired invite can no longer be accepted.',
  ),
  SMTP_URL: setting<string | null>(
    smtpUrl,
    null,
    'SMTP server for invitation e-mails (smtp://user:password@host:587, or smtps:// for implicit TLS). Unset: no e-mail is sent.',
  ),
  SMTP_FROM: setting(
    mailbox,
    'noreply@localhost',
    'Sender of invitation e-mails: an address or "Name <address>".',
  ),
  SMTP_TIMEOUT_MS: setting(
    int(100, 600000),
    10000,
    'Connection, greeting and socket timeout of one SMTP delivery; a request sending invitations waits at most about this long.',
  ),
  PUBLIC_URL: setting(
    httpUrl,
    'http://localhost:3000',
    "The service's public base URL, used in the accept instructions of invitation e-mails.",
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof INVITES_SETTINGS> {}
}
