/**
 * What one side stored for a capture check session, and the comparison of the two sides: the recording row's
 * figures and, chunk by chunk, its window, time range, event count and decompressed snapshot lines, wherever the
 * chunk is kept (a `data` row or an object in the bucket).
 */
import { createDecipheriv } from 'node:crypto';
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
  /**
   * Where the gzip bytes are: the row's `data`, an object of its own (`object_key`), a range of a packed object
   * (`packed`, encrypted or not), or the buffer of chunks waiting to be packed (`buffer`).
   */
  storedIn: 'data' | 'object' | 'packed' | 'buffer';
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

/** `length` bytes from `offset` of an object, or all of it. */
export type ReadObject = (key: string, range?: { offset: number; length: number }) => Promise<Buffer>;

/**
 * AES-256-GCM open of `nonce (12) ‖ ciphertext ‖ tag (16)` with associated data `aad` — the service's format
 * (docs/decisions.md §14), written again here so that the check does not trust the service's own code.
 */
export function openSealed(key: Buffer, sealed: Buffer, aad: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
}

/**
 * Reads what is stored for a session; `readObject` fetches a chunk's object (gzip bytes) by its key, or a
 * range of a packed one; `kek` (base64, RECORDING_KEY_ENCRYPTION_KEY) opens the recording's data key when its
 * packed chunks are encrypted.
 */
export async function readStoredRecording(
  db: pg.Client,
  teamId: number,
  sessionId: string,
  readObject: ReadObject,
  kek: string | null = null,
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
  const hasPacked =
    (
      await db.query(
        `SELECT 1 FROM information_schema.columns WHERE table_name = 'session_recording_snapshots' AND column_name = 'encrypted'`,
      )
    ).rowCount === 1;
  const chunkRows = await db.query<{
    id: string;
    window_id: string;
    first_timestamp: Date;
    last_timestamp: Date;
    event_count: number;
    data: Buffer | null;
    buffered: Buffer | null;
    object_key: string | null;
    object_offset: string | null;
    object_length: number | null;
    encrypted: boolean;
  }>(
    hasPacked
      ? `SELECT s.id::text AS id, s.window_id, s.first_timestamp, s.last_timestamp, s.event_count, s.data,
                b.data AS buffered, s.object_key, s.object_offset::text AS object_offset, s.object_length,
                s.encrypted
           FROM session_recording_snapshots s
           LEFT JOIN session_recording_chunk_buffer b
             ON s.data IS NULL AND s.object_key IS NULL AND b.created_at = s.created_at AND b.snapshot_id = s.id
          WHERE s.team_id = $1 AND s.session_id = $2
          ORDER BY s.first_timestamp, s.id`
      : `SELECT id::text AS id, window_id, first_timestamp, last_timestamp, event_count, data,
                NULL::bytea AS buffered, ${hasObjectKey ? 'object_key' : 'NULL::varchar AS object_key'},
                NULL AS object_offset, NULL AS object_length, false AS encrypted
           FROM session_recording_snapshots WHERE team_id = $1 AND session_id = $2
          ORDER BY first_timestamp, id`,
    [teamId, sessionId],
  );
  let dataKey: Buffer | null = null;
  if (chunkRows.rows.some((c) => c.encrypted)) {
    if (!kek)
      throw new Error(`recording ${sessionId}: encrypted chunks, and no key-encryption key to open them`);
    const { rows: keyRows } = await db.query<{ wrapped_key: Buffer }>(
      'SELECT wrapped_key FROM session_recording_keys WHERE team_id = $1 AND session_id = $2',
      [teamId, sessionId],
    );
    if (!keyRows.length) throw new Error(`recording ${sessionId}: encrypted chunks, and no data key`);
    dataKey = openSealed(Buffer.from(kek, 'base64'), keyRows[0].wrapped_key, `${teamId}/${sessionId}`);
  }
  const chunks: StoredChunk[] = [];
  for (const c of chunkRows.rows) {
    let gz: Buffer;
    let storedIn: StoredChunk['storedIn'];
    if (c.data) [gz, storedIn] = [c.data, 'data'];
    else if (c.buffered) [gz, storedIn] = [c.buffered, 'buffer'];
    else if (c.object_key && c.object_offset !== null && c.object_length !== null) {
      const range = await readObject(c.object_key, {
        offset: Number(c.object_offset),
        length: c.object_length,
      });
      gz = c.encrypted ? openSealed(dataKey as Buffer, range, `${teamId}/${sessionId}/${c.id}`) : range;
      storedIn = 'packed';
    } else if (c.object_key) [gz, storedIn] = [await readObject(c.object_key), 'object'];
    else throw new Error(`recording ${sessionId}: chunk ${c.id} has no bytes anywhere`);
    chunks.push({
      windowId: c.window_id,
      firstTimestamp: c.first_timestamp.toISOString(),
      lastTimestamp: c.last_timestamp.toISOString(),
      eventCount: c.event_count,
      storedIn,
      lines: gunzipSync(gz).toString('utf8'),
    });
  }
  const recording = Object.fromEntries(
    Object.entries(rows[0]).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]),
  );
  return { recording, eventKeys: keys.rows[0].n, chunks };
}
