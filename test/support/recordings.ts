/** Builders of capture requests and rrweb events for the recording specs. */
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { expect } from '@jest/globals';
import type { Response } from 'superagent';
import type TestAgent from 'supertest/lib/agent.js';
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

/** The stored rrweb events of a session, chunk by chunk (decompressed from their JSON lines). */
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
    events: parseSnapshotLines(gunzipSync(r.data).toString('utf8')).map(([windowId, event]) => {
      expect(windowId).toBe(r.window_id);
      return event;
    }),
  }));
}

/** The `[window_id, event]` pairs of a JSON lines snapshot body; every line must be one such pair. */
export function parseSnapshotLines(text: string): [string, Rrweb][] {
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const pair = JSON.parse(line) as [string, Rrweb];
      expect(Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string').toBe(true);
      return pair;
    });
}

export interface SnapshotSource {
  source: string;
  blob_key: string;
  start_timestamp: string;
  end_timestamp: string;
}

/**
 * Every event of a recording through the snapshots API, as a player reads it: the list of sources, then each
 * source's lines; returns the sources and the events of all windows merged in time order.
 */
export async function readAllSnapshots(
  http: TestAgent,
  path: string,
  auth: Record<string, string> = {},
): Promise<{ sources: SnapshotSource[]; events: { window_id: string; event: Rrweb }[] }> {
  const list = await http.get(path).set(auth).expect(200);
  expect(list.headers['content-type']).toMatch(/^application\/json/);
  const sources = (list.body as { sources: SnapshotSource[] }).sources;
  const events: { window_id: string; event: Rrweb; n: number }[] = [];
  for (const source of sources) {
    const res = await http
      .get(`${path}?source=blob_v2&blob_key=${source.blob_key}`)
      .set(auth)
      .buffer(true)
      .parse(textParser)
      .expect(200);
    expect(res.headers['content-type']).toBe('application/jsonl');
    for (const [window_id, event] of parseSnapshotLines(res.body as string)) {
      events.push({ window_id, event, n: events.length });
    }
  }
  events.sort((a, b) => a.event.timestamp - b.event.timestamp || a.n - b.n);
  return { sources, events: events.map(({ window_id, event }) => ({ window_id, event })) };
}

/** A supertest parser that keeps the body as text (JSON lines are not one JSON document). */
export function textParser(res: Response, done: (err: Error | null, body: string) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (text += chunk));
  stream.on('end', () => done(null, text));
}
