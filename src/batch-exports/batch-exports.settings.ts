import { bool, byteSize, int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the batch-exports feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const BATCH_EXPORTS_SETTINGS = {
  SCHEDULER_ENABLED: setting(
    bool,
    true,
    'Run the batch export scheduler in this process (safe on every replica: each run is created once).',
  ),
  SCHEDULER_TICK_SECONDS: setting(
    int(1, 3600),
    60,
    'Seconds between two ticks of the batch export scheduler, each creating the runs that have fallen due.',
  ),
  SCHEDULER_MAX_CATCHUP: setting(
    int(1, 100000),
    100,
    'Most runs one scheduler tick creates per batch export when catching up missed intervals after downtime.',
  ),
  SCHEDULER_TICK_CONNECTIONS: setting(
    int(1, 16),
    2,
    "Connections one scheduler tick uses at once when more than 2,000 exports are due: its transactions of 2,000 exports run side by side, their row locks one after the other in key order. About the database server's cores; 1 runs them one after the other.",
  ),
  BACKFILL_MAX_RUNS: setting(
    int(1, 1000000),
    10000,
    'Most runs (intervals) one batch export backfill may create.',
  ),
  BATCH_EXPORT_WORKERS: setting(
    bool,
    true,
    'Run batch export workers in this process: they claim the runs waiting in the job queue (pg-boss, on this database) and deliver their data. Any number of processes may run them; false leaves the runs to other processes.',
  ),
  BATCH_EXPORT_WORKER_CONCURRENCY: setting(
    int(1, 64),
    2,
    'Most batch export runs one process executes at a time (runs of one export always execute one after the other).',
  ),
  BATCH_EXPORT_POLL_INTERVAL_MS: setting(
    int(100, 600000),
    2000,
    'How often an idle batch export worker looks for a run to claim.',
  ),
  BATCH_EXPORT_MAX_ATTEMPTS: setting(
    int(1, 100),
    5,
    'Attempts of a batch export run that fails with a retryable error (destination unreachable, server error) before it ends FailedRetryable.',
  ),
  BATCH_EXPORT_RETRY_DELAY_SECONDS: setting(
    int(1, 86400),
    30,
    'Base delay before a failed batch export run is tried again; it doubles with each attempt (with jitter), up to an hour.',
  ),
  BATCH_EXPORT_HEARTBEAT_SECONDS: setting(
    int(10, 3600),
    30,
    'A running batch export run reports to the queue several times within this period; a run whose worker stopped reporting (killed, lost its database) is taken up again by another worker after it.',
  ),
  BATCH_EXPORT_SUPERVISE_SECONDS: setting(
    int(1, 3600),
    10,
    'How often worker processes look for runs whose worker stopped reporting, and do the queue upkeep.',
  ),
  BATCH_EXPORT_DRAIN_TIMEOUT_MS: setting(
    int(0, 86400000),
    8000,
    'On shutdown, how long the runs in progress may take to finish; runs still going then are stopped and handed back to the queue for another worker. Keep it below SHUTDOWN_TIMEOUT_MS.',
  ),
  BATCH_EXPORT_PAGE_SIZE: setting(
    int(1, 100000),
    5000,
    'Rows a batch export run reads from the database at a time (memory per run grows with it).',
  ),
  BATCH_EXPORT_PAGE_MAX_BYTES: setting(
    byteSize,
    8 * 1024 * 1024,
    "Most bytes (the rows' values as text) a batch export run reads from the database at a time, whatever BATCH_EXPORT_PAGE_SIZE: a page ends before the row that would pass it, and holds one row at least. A single row larger than this fails its run (Failed, naming the row and the interval) instead of being read.",
  ),
  BATCH_EXPORT_HTTP_MAX_RETRIES: setting(
    int(0, 20),
    5,
    'Retries of one batch POSTed by an HTTP batch export when the receiver answers 429 or 5xx or cannot be reached.',
  ),
  BATCH_EXPORT_HTTP_RETRY_DELAY_MS: setting(
    int(1, 600000),
    1000,
    'First delay before retrying an HTTP batch export POST; it doubles with each retry (Retry-After is honoured when longer, up to a minute).',
  ),
  BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: setting(
    bool,
    false,
    'Let batch exports deliver to hosts that resolve to loopback, private, link-local or cloud metadata addresses (also through the IPv6 forms that carry such an IPv4 address), in every environment. Without it, the one private destination allowed is the embedded PostgreSQL itself (127.0.0.1 at EMBEDDED_PG_PORT) when the service runs on it (no DATABASE_URL).',
  ),
  BATCH_EXPORT_HTTP_TIMEOUT_MS: setting(
    int(100, 3600000),
    60000,
    'Longest one request of an HTTP batch export may take in total, from connecting to the last byte of the answer (a receiver that answers slowly is cut off at it, and the batch retried).',
  ),
  BATCH_EXPORT_STATEMENT_TIMEOUT_MS: setting(
    int(100, 86400000),
    600000,
    "Longest one statement on a Postgres or Redshift batch export destination may run (the destination's statement_timeout, and a timer in this service); a statement blocked or running longer fails the attempt, which is retried. It bounds the load of a run's rows too.",
  ),
  BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: setting(
    int(1000, 86400000),
    3600000,
    'Longest one attempt of a batch export run may take; past it the attempt is stopped, its worker slot freed and the run retried (BATCH_EXPORT_MAX_ATTEMPTS).',
  ),
  BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: setting(
    int(0, 10000),
    2,
    "Most batch export runs of one organization executing at a time over all workers; an organization's further runs wait in the queue without taking a worker slot. 0: no limit.",
  ),
  BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_PROJECT: setting(
    int(0, 10000),
    2,
    "Most batch export runs of one project executing at a time over all workers; a project's further runs wait in the queue without taking a worker slot. 0: no limit.",
  ),
  BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_USER: setting(
    int(0, 10000),
    2,
    "Most batch export runs of one user executing at a time over all workers (the user whose key created the export; for an export created before that was recorded, or whose user was deleted, the organization's first owner), so one user with several organizations cannot take every worker slot. 0: no limit.",
  ),
  BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS: setting(
    int(0, 86400),
    300,
    "A batch export run ready to start that has waited this long for a worker slot gets a WARNING line in its log (once) and in the service's log, naming the runs executing with its organization, project and user against their caps. 0: off.",
  ),
  BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS: setting(
    int(1, 50),
    8,
    "Attempts to deliver one batch export notification webhook (a failed run or an auto-pause) when the receiver answers other than 2xx, times out (BATCH_EXPORT_HTTP_TIMEOUT_MS) or cannot be reached; then it is dropped and a WARNING goes to the export's log.",
  ),
  BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS: setting(
    int(1, 86400),
    30,
    'Base delay before a batch export notification webhook is tried again (through the job queue, so a restart loses none); it doubles with each attempt (with jitter), up to an hour.',
  ),
  BATCH_EXPORT_LAG_METRIC_EXPORTS: setting(
    int(0, 10000),
    100,
    'Most batch exports with a series of their own in the batch_export_lag_seconds metric (the ones furthest behind; the others count in batch_export_lag_max_seconds per destination type only). 0: no per-export series.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof BATCH_EXPORTS_SETTINGS> {}
}
