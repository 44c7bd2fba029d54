import { int, setting, str, type SettingsTable, type SettingValues } from '../../config/settings.js';

/**
 * The settings of on-demand file exports (part of the batch-exports feature's manifest). The files are written
 * to the object store of recordings (RECORDING_S3_BUCKET, RECORDING_S3_ENDPOINT and the AWS variables); without
 * one the service streams each file from the database when it is downloaded.
 */
export const FILE_EXPORTS_SETTINGS = {
  FILE_EXPORT_S3_PREFIX: setting(
    str,
    'file_exports/',
    'Key prefix of on-demand file exports in RECORDING_S3_BUCKET (`<prefix><project>/<export id>/<start>-<end>.jsonl` or `.parquet`). Keep it outside RECORDING_S3_PREFIX: the recordings’ orphan sweep deletes what no recording points at under that prefix.',
  ),
  FILE_EXPORT_URL_TTL_SECONDS: setting(
    int(1, 604800),
    3600,
    'Lifetime of the presigned URL a file export’s `content` route redirects to (S3 allows at most 7 days).',
  ),
  FILE_EXPORT_TTL_HOURS: setting(
    int(1, 8760),
    24,
    'Hours a file export is kept after it is requested (`expires_after`): then its object and its row are removed by the expiry task.',
  ),
  FILE_EXPORT_EXPIRY_INTERVAL_SECONDS: setting(
    int(0, 86400),
    300,
    'Seconds between two runs of the file export expiry task in this process (safe on every replica); 0: none here.',
  ),
  FILE_EXPORT_MAX_RANGE_DAYS: setting(
    int(1, 3650),
    366,
    'Longest range (`end_at` − `start_at`) one file export may cover.',
  ),
  FILE_EXPORT_MAX_QUEUED_PER_PROJECT: setting(
    int(1, 1000),
    10,
    'File exports one user may have Pending or Running in one project at a time: one more is refused (429 `throttled`) until one ends or is cancelled. Only counts with an object store (without one an export is Complete at once).',
  ),
  FILE_EXPORT_STORE_ATTEMPTS: setting(
    int(1, 20),
    5,
    'Attempts at writing a file export’s file when the object store fails transiently (refused or reset connections, timeouts, 5xx and 429 answers): each starts the file again; after the last the export is Failed with the store’s error.',
  ),
  FILE_EXPORT_STORE_RETRY_DELAY_MS: setting(
    int(0, 600000),
    2000,
    'Wait before the second attempt at a file export’s file after a transient object store error; it doubles for each attempt after (at most 60 s).',
  ),
} satisfies SettingsTable;

declare module '../../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof FILE_EXPORTS_SETTINGS> {}
}
