import { byteSizeBetween, int, setting, type SettingsTable, type SettingValues } from '../config/settings.js';

/**
 * The settings of the events feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const EVENTS_SETTINGS = {
  EVENTS_RETENTION_DAYS: setting(
    int(1, 3650),
    365,
    "Days an analytics event is kept, from the start of the (UTC) day of its timestamp, unless its project sets `events_retention_period_days`. Expired events leave the API at once; whole day partitions are dropped once every project's events in them have expired. Events older than this when captured are dropped (counted in the log).",
  ),
  EVENTS_PURGE_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two runs of the event partition task in this process: it creates the day partitions of `events` ahead (today and the next EVENTS_PARTITIONS_AHEAD_DAYS days) and drops or trims expired ones; 0: not in this process (partitions are still created on demand by capture). Safe on every replica.',
  ),
  EVENTS_PARTITIONS_AHEAD_DAYS: setting(
    int(1, 60),
    3,
    'Days after today whose `events` partitions the partition task creates ahead.',
  ),
  EVENTS_COLUMNAR_AFTER_DAYS: setting(
    int(0, 3650),
    0,
    "On a Citus cluster: the partition task converts the `events` day partitions of days before today minus this many days to Citus's `columnar` (compressed, read-only); capture drops events of those days. Their events take no DELETE: a deleted project's stay, unread, until the partition is dropped; the events' foreign key to projects is dropped. 0: off. Without Citus's `columnar` access method, the service refuses to start (docs/citus.md).",
  ),
  EVENT_PROPERTIES_MAX_BYTES: setting(
    int(1024, 16 * 1024 * 1024),
    1024 * 1024,
    "Most bytes of one captured event's properties as JSON (PostHog's 1 MB event limit); a larger event is dropped, counted and logged, and the rest of its batch stored.",
  ),
  EVENTS_LIST_MAX_BYTES: setting(
    byteSizeBetween(64 * 1024, 256 * 1024 * 1024),
    8 * 1024 * 1024,
    "Most bytes of events (their properties' JSON, large values already replaced by the truncation marker, and elements chains) one page of an events list holds (`GET /api/projects/:id/events`, the public `GET /api/shared/:token/events`): a page ends early, before `limit`, at the first event past it (always at least one event), and `next` starts at the first event left out.",
  ),
  EVENTS_MAX_PERSON_LINKS_PER_REQUEST: setting(
    int(1, 1000000),
    1000,
    'Most events of one analytics capture request that link two distinct ids (`$identify` with `$anon_distinct_id`, `$create_alias` and `$merge_dangerously` with `alias`), each of which may merge two persons; a request with more is refused whole with 400 (nothing stored). Send the rest in later requests.',
  ),
  EVENTS_MAX_PERSONS_PER_REQUEST: setting(
    int(1, 10000000),
    10000,
    'Most distinct ids whose persons one analytics capture request finds or creates (the `distinct_id` of its events that process persons, and the ids they link), so at most that many persons; a request with more is refused whole with 400 (nothing stored). Send them in several requests.',
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof EVENTS_SETTINGS> {}
}
