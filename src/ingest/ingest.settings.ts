import { byteSize, int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of ingestion (the capture protocol's limits and memory budget), declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const INGEST_SETTINGS = {
  RECORDING_BODY_LIMIT: setting(
    byteSize,
    25 * 1024 * 1024,
    'Largest recording capture request (POST /s/, e.g. 25mb): bounds both the bytes received (at most CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP of them) and the decompressed body; larger is 413.',
  ),
  CAPTURE_MAX_EVENTS: setting(
    int(1, 10000000),
    50000,
    'Most events in one capture request (POST /s/); more is 413, found while decoding.',
  ),
  CAPTURE_MAX_SNAPSHOT_EVENTS: setting(
    int(1, 10000000),
    100000,
    'Most rrweb events in the $snapshot_data of one $snapshot event; more is 413, found while decoding.',
  ),
  CAPTURE_MAX_SESSIONS: setting(
    int(1, 100000),
    100,
    'Most recordings (distinct `$session_id` values) in one capture request (POST /s/); more is 413 and nothing of the request is stored. posthog-js sends one.',
  ),
  CAPTURE_MEMORY_BUDGET: setting(
    byteSize,
    96 * 1024 * 1024,
    'Memory the capture requests of one process may hold at once, as estimated while reading and decoding (the received bytes collected and their copies, 2 bytes per decoded byte, 64 per JSON value); past it the oldest request waits and the others get 503 with Retry-After.',
  ),
  PUBLIC_JSON_MAX_KEYS: setting(
    int(1, 100000000),
    10000,
    'Most keys (members) in one JSON object of a body of POST /s/, /flags or /decide; more is 413, found while decoding.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof INGEST_SETTINGS> {}
}
