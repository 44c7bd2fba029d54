import type { RrwebEvent } from './recording-metadata.js';
import type { SnapshotSource } from '../session-recording.entity.js';

/**
 * What ingestion stores: the validated `$snapshot` event of one session and window. Capture builds these from a
 * request body; this module, which stores them, owns the type.
 */
export interface SnapshotBatch {
  /** Idempotency key: the event's `uuid`, else `sha256:` + digest of window id and snapshot data. */
  key: string;
  sessionId: string;
  windowId: string;
  distinctId: string;
  snapshotSource: SnapshotSource;
  events: RrwebEvent[];
  /**
   * `$process_person_profile` is not `false` (absent: true): the event may create and update a person. When
   * false, its recording is attached to the distinct id's person if there is one, and its `$set` is not applied.
   */
  processPerson?: boolean;
  /** Person properties from `$set` / `$set_once`. */
  set: Record<string, unknown>;
  setOnce: Record<string, unknown>;
  /** Person properties removed (`$unset`, as sent), applied after `set` as for any event (PersonUpdatesService). */
  unset?: unknown;
}
