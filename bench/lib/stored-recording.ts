/**
 * What one side stored for a capture check session, and the comparison of the two sides: the recording row's
 * figures and, chunk by chunk, its window, time range, event count and decompressed snapshot lines, wherever the
 * chunk is kept (a `data` row or an object in the bucket).
 */
import { gunzipSync } from 'node:zlib';
import type pg from 'pg';

/** Columns of the recording row both sides must agree on (ids, the person and timestamps of writing aside). */
export const RECORDING_FIELDS = [
  'start_time',
  'end_time',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'console_log_count',
  'console_warn_count',
  'console_error_count',
  'active_ms',
  'event_count',
  'start_url',
  'start_url_time',
  'snapshot_source',
  'snapshot_bytes',
  'deleted_at',
] as const;

export interface StoredChunk {
  windowId: string;
  firstTimestamp: string;
  lastTimestamp: string;
  eventCount: number;
  /** Where the gzip bytes are: the row's `data`, or an object (`object_key`). */
  storedIn: 'data' | 'object';
  /** The decompressed snapshot lines. */
  lines: string;
}

export interface StoredRecording {
  recording: Record<string, unknown>;
  /** Event keys recorded for the session. */
  eventKeys: number;
  chunks: StoredChunk[];
}

/** The first difference between what two sides stored, or null when they stored the same. */
export function storedDifference(service: StoredRecording, baseline: StoredRecording): string | null {
  for (const field of RECORDING_FIELDS) {
    const a = JSON.stringify(service.recording[field] ?? null);
    const b = JSON.stringify(baseline.recording[field] ?? null);
    if (a !== b) return `recording.${field}: service ${a}, baseline ${b}`;
  }
  if (service.eventKeys !== baseline.eventKeys)
    return `event keys: service ${service.eventKeys}, baseline ${baseline.eventKeys}`;
  if (service.chunks.length !== baseline.chunks.length)
    return `chunks: service ${service.chunks.length}, baseline ${baseline.chunks.length}`;
  for (let i = 0; i < service.chunks.length; i++) {
    const a = service.chunks[i];
    const b = baseline.chunks[i];
    for (const field of ['windowId', 'firstTimestamp', 'lastTimestamp', 'eventCount', 'storedIn'] as const) {
      if (a[field] !== b[field]) return `chunk ${i} ${field}: service ${a[field]}, baseline ${b[field]}`;
    }
    if (a.lines !== b.lines) {
      let at = 0;
      while (at < a.lines.length && a.lines[at] === b.lines[at]) at++;
      return `chunk ${i} lines differ at character ${at}: service …${a.lines.slice(at, at + 60)}, baseline …${b.lines.slice(at, at + 60)}`;
    }
  }
  return null;
}

/** Reads what is stored for a session; `readObject` fetches a chunk's object (gzip bytes) by its key. */
export async function readStoredRecording(
  db: pg.Client,
  teamId: number,
  sessionId: string,
  readObject: (key: string) => Promise<Buffer>,
): Promise<StoredRecording | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT ${RECORDING_FIELDS.join(', ')} FROM session_recordings WHERE team_id = $1 AND session_id = $2`,
    [teamId, sessionId],
  );
  if (!rows.length) return null;
  const keys = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM session_recording_event_keys WHERE team_id = $1 AND session_id = $2',
    [teamId, sessionId],
  );
  const hasObjectKey =
    (
      await db.query(
        `SELECT 1 FROM information_schema.columns WHERE table_name = 'session_recording_snapshots' AND column_name = 'object_key'`,
      )
    ).rowCount === 1;
  const chunkRows = await db.query<{
    window_id: string;
    first_timestamp: Date;
    last_timestamp: Date;
    event_count: number;
    data: Buffer | null;
    object_key: string | null;
  }>(
    `SELECT window_id, first_timestamp, last_timestamp, event_count, data,
            ${hasObjectKey ? 'object_key' : 'NULL::varchar AS object_key'}
       FROM session_recording_snapshots WHERE team_id = $1 AND session_id = $2
      ORDER BY first_timestamp, id`,
    [teamId, sessionId],
  );
  const chunks: StoredChunk[] = [];
  for (const c of chunkRows.rows) {
    const gz = c.data ?? (c.object_key ? await readObject(c.object_key) : Buffer.alloc(0));
    chunks.push({
      windowId: c.window_id,
      firstTimestamp: c.first_timestamp.toISOString(),
      lastTimestamp: c.last_timestamp.toISOString(),
      eventCount: c.event_count,
      storedIn: c.data ? 'data' : 'object',
      lines: gunzipSync(gz).toString('utf8'),
    });
  }
  const recording = Object.fromEntries(
    Object.entries(rows[0]).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]),
  );
  return { recording, eventKeys: keys.rows[0].n, chunks };
}
