/** Builders of capture requests and rrweb events for the recording specs. */
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { DataSource } from 'typeorm';

export type Rrweb = { type: number; timestamp: number; data?: Record<string, unknown> };

export const rr = {
  meta: (timestamp: number, href: string): Rrweb => ({
    type: 4,
    timestamp,
    data: { href, width: 1280, height: 800 },
  }),
  full: (timestamp: number): Rrweb => ({
    type: 2,
    timestamp,
    data: { node: { type: 0, childNodes: [], id: 1 }, initialOffset: { left: 0, top: 0 } },
  }),
  move: (timestamp: number): Rrweb => ({
    type: 3,
    timestamp,
    data: { source: 1, positions: [{ x: 10, y: 20, id: 5, timeOffset: 0 }] },
  }),
  click: (timestamp: number, interaction = 2): Rrweb => ({
    type: 3,
    timestamp,
    data: { source: 2, type: interaction, id: 7, x: 10, y: 20 },
  }),
  input: (timestamp: number, text = 'a'): Rrweb => ({
    type: 3,
    timestamp,
    data: { source: 5, id: 9, text, isChecked: false },
  }),
  scroll: (timestamp: number): Rrweb => ({ type: 3, timestamp, data: { source: 3, id: 1, x: 0, y: 400 } }),
  mutation: (timestamp: number): Rrweb => ({
    type: 3,
    timestamp,
    data: { source: 0, texts: [], attributes: [], removes: [], adds: [] },
  }),
  console: (timestamp: number, level: string): Rrweb => ({
    type: 6,
    timestamp,
    data: { plugin: 'rrweb/console@1', payload: { level, payload: ['"message"'], trace: [] } },
  }),
};

export interface SnapshotOptions {
  token?: string;
  sessionId: string;
  windowId?: string;
  distinctId?: string;
  uuid?: string | null;
  events: Rrweb[];
  properties?: Record<string, unknown>;
}

/** A `$snapshot` event as posthog-js sends it (token in properties, a uuid unless `uuid: null`). */
export function snapshotEvent(o: SnapshotOptions): Record<string, unknown> {
  return {
    event: '$snapshot',
    ...(o.uuid === null ? {} : { uuid: o.uuid ?? randomUUID() }),
    distinct_id: o.distinctId ?? 'visitor-1',
    timestamp: new Date(o.events[0]?.timestamp ?? 0).toISOString(),
    properties: {
      ...(o.token ? { token: o.token } : {}),
      $session_id: o.sessionId,
      $window_id: o.windowId ?? `${o.sessionId}-w`,
      $snapshot_bytes: JSON.stringify(o.events).length,
      $snapshot_data: o.events,
      $lib: 'web',
      ...o.properties,
    },
  };
}

let counter = 0;
/** A session id no other test uses. */
export const newSessionId = (label = 's') =>
  `${label}-${process.pid}-${++counter}-${randomUUID().slice(0, 8)}`;

/** Rows in every table capture writes, to prove a rejected request stored nothing. */
export async function captureTableCounts(dataSource: DataSource): Promise<Record<string, number>> {
  const [row] = await dataSource.query(`SELECT
      (SELECT count(*)::int FROM session_recordings) AS recordings,
      (SELECT count(*)::int FROM persons) AS persons,
      (SELECT count(*)::int FROM person_distinct_ids) AS distinct_ids,
      (SELECT count(*)::int FROM session_recording_snapshots) AS snapshots,
      (SELECT count(*)::int FROM session_recording_event_keys) AS event_keys`);
  return row as Record<string, number>;
}

/** The stored rrweb events of a session, chunk by chunk (decompressed). */
export async function storedChunks(
  dataSource: DataSource,
  sessionId: string,
): Promise<{ window_id: string; event_count: number; first: string; last: string; events: Rrweb[] }[]> {
  const rows: { window_id: string; event_count: number; first: Date; last: Date; data: Buffer }[] =
    await dataSource.query(
      `SELECT window_id, event_count, first_timestamp AS first, last_timestamp AS last, data
         FROM session_recording_snapshots WHERE session_id = $1 ORDER BY first_timestamp, id`,
      [sessionId],
    );
  return rows.map((r) => ({
    window_id: r.window_id,
    event_count: r.event_count,
    first: r.first.toISOString(),
    last: r.last.toISOString(),
    events: JSON.parse(gunzipSync(r.data).toString('utf8')) as Rrweb[],
  }));
}
