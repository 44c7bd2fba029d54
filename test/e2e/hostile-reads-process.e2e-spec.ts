import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import {
  bootstrapKey,
  deploymentNodeOptions,
  rawRequest,
  type RawResponse,
  sampleRss,
  type ServiceProcess,
  startService,
} from '../support/service-process.js';
import { beginAsService, cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * Reads of what anyone holding a project's public token can plant, by the built service with the Deployment's
 * heap (`--max-old-space-size=256`):
 * - events of 1 MB of properties (the capture limit) in one session, read through the public share of its
 *   recording (`limit=1000`, and two `limit=200` at once) and the events list (`limit=1000` and the default);
 * - a person with 56,001 distinct ids of 200 characters (an `$identify` each) and 500 KB of properties, the person
 *   of 20 recordings, read through the recordings list (`limit=20`).
 * Each read once loaded every row whole and killed the process; now every answer is bounded per row and per page,
 * the process lives and stays within the Deployment's memory limit. A process that died is started again before the
 * next read, so each read is tried on its own; the last test fails when any read killed one.
 *
 * Scaled for speed: one event of each kind goes through capture with the public token, the rest are copies made
 * in SQL (400 events rather than 1,000: enough for the old reads to pass the heap several times over).
 *
 * @serial: measures the built service's memory (test/support/test-runner.js).
 */

const MiB = 1024 * 1024;
/** The Deployment's memory limit (deploy/k8s/base/deployment.yaml: 512Mi). */
const MEMORY_LIMIT = 512 * MiB;
const EVENTS = 400;
const BIG = 'x'.repeat(980_000);
const MEDIUM = 'm'.repeat(30_000);
const RECORDINGS = 20;
const DISTINCT_IDS = 56_001;

interface ListBody<T> {
  count: number;
  next: string | null;
  results: T[];
}

/** Whether the service answers; when it does not, waits for its process to end (it was killed). */
async function up(service: ServiceProcess): Promise<boolean> {
  try {
    if ((await rawRequest(service.base, '/healthz')).status === 200) return true;
  } catch {
    // Refused: the process is ending or has ended.
  }
  if (service.child.exitCode === null && service.child.signalCode === null) {
    await new Promise((resolve) => service.child.once('exit', resolve));
  }
  return false;
}

describe('the built service: reads of planted events and persons', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let auth: Record<string, string>;
  let projectId: number;
  let accessToken: string;
  let eventUuid: string;
  let env: Record<string, string>;
  let rss: ReturnType<typeof sampleRss>;
  let peak = 0;
  const deaths: string[] = [];
  const sessionId = `planted-${randomUUID()}`;
  const victim = 'victim';

  const get = async (path: string, headers = auth): Promise<RawResponse> => {
    const res = await rawRequest(service.base, path, { headers });
    return res;
  };

  beforeAll(async () => {
    database = await cloneTemplate('hostile_reads');
    env = { DATABASE_URL: database.url, LOG_LEVEL: 'error', NODE_OPTIONS: deploymentNodeOptions() };
    service = await startService(env);
    auth = { Authorization: `Bearer ${await bootstrapKey(service)}` };
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: auth,
      body: { name: 'Planted reads' },
    });
    const team = org.json<{ teams: { id: number; api_token: string }[] }>().teams[0];
    projectId = team.id;
    const token = team.api_token;
    const now = Date.now();
    // 20 recordings of one distinct id, the first of them the session of the events.
    const sessions = [sessionId, ...Array.from({ length: RECORDINGS - 1 }, (_, i) => `${sessionId}-${i}`)];
    const recordings = await rawRequest(service.base, '/s/?compression=gzip-js', {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      raw: gzipSync(
        JSON.stringify(
          sessions.map((s, i) => ({
            event: '$snapshot',
            distinct_id: victim,
            properties: {
              token,
              $session_id: s,
              $window_id: `${s}-w`,
              $snapshot_data: [
                {
                  type: 4,
                  timestamp: now - 1000 - i,
                  data: { href: 'https://shop.example/', width: 1280, height: 800 },
                },
                { type: 3, timestamp: now - i, data: { source: 0 } },
              ],
            },
          })),
        ),
      ),
    });
    expect(recordings.status).toBe(200);
    // One event of 1 MB of properties through capture, with the public token.
    eventUuid = randomUUID();
    const captured = await rawRequest(service.base, '/e/?compression=gzip-js', {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      raw: gzipSync(
        JSON.stringify([
          {
            event: '$pageview',
            uuid: eventUuid,
            distinct_id: victim,
            timestamp: new Date(now).toISOString(),
            properties: {
              token,
              $session_id: sessionId,
              $current_url: 'https://shop.example/cart',
              big: BIG,
              medium: MEDIUM,
            },
          },
        ]),
      ),
    });
    expect(captured.status).toBe(200);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      // Copies of it (what 399 more capture requests would store), each a millisecond earlier.
      const copies = await db.query(
        `INSERT INTO events (team_id, uuid, event, distinct_id, person_id, properties, "timestamp", elements_chain,
                             session_id, window_id)
         SELECT e.team_id, gen_random_uuid(), e.event, e.distinct_id, e.person_id, e.properties,
                e."timestamp" - i * interval '1 millisecond', e.elements_chain, e.session_id, e.window_id
           FROM events e, generate_series(1, $2::int) i WHERE e.uuid = $1`,
        [eventUuid, EVENTS - 1],
      );
      expect(copies.rowCount).toBe(EVENTS - 1);
      // The person of the recordings: 56,000 more distinct ids (an `$identify` each would link them) and
      // 500 KB of properties (a few `$set`s within PERSON_PROPERTIES_MAX_BYTES).
      const [{ person_id: personId }] = (
        await db.query<{ person_id: number }>(
          'SELECT person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = $2',
          [projectId, victim],
        )
      ).rows;
      await db.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
         SELECT $1, 'alias-' || lpad(i::text, 6, '0') || '-' || repeat('d', 187), $2 FROM generate_series(1, $3::int) i`,
        [projectId, personId, DISTINCT_IDS - 1],
      );
      // As the service updates a person (on Citus: its transaction's id carried to the worker, the project named).
      await beginAsService(db);
      await db.query(
        `UPDATE persons SET properties = (SELECT jsonb_object_agg('k' || i, repeat('v', 990)) FROM generate_series(1, 500) i)
                                         || '{"email": "victim@example.com"}'::jsonb WHERE team_id = $1 AND id = $2`,
        [projectId, personId],
      );
      await db.query('COMMIT');
    } finally {
      await db.end();
    }
    await get(`/api/projects/${projectId}/session_recordings/${sessionId}/sharing`);
    const sharing = await rawRequest(
      service.base,
      `/api/projects/${projectId}/session_recordings/${sessionId}/sharing`,
      { method: 'PATCH', headers: auth, body: { enabled: true } },
    );
    accessToken = sharing.json<{ access_token: string }>().access_token;
  }, 120_000);

  beforeEach(async () => {
    rss = sampleRss(service.child.pid!);
  }, 60_000);

  afterEach(async () => {
    peak = Math.max(peak, rss.stop());
    if (await up(service)) return;
    deaths.push(expect.getState().currentTestName ?? '?');
    service = await startService(env);
  }, 60_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  it('answers the public share of the session with limit=1000: every event, only what the share shows', async () => {
    const res = await get(`/api/shared/${accessToken}/events?limit=1000`, {});
    expect(res.status).toBe(200);
    const body = res.json<ListBody<Record<string, unknown>>>();
    expect(body.count).toBe(EVENTS);
    expect(body.results).toHaveLength(EVENTS);
    expect(body.next).toBeNull();
    expect(body.results[EVENTS - 1]).toEqual({
      uuid: eventUuid,
      event: '$pageview',
      timestamp: expect.any(String),
      current_url: 'https://shop.example/cart',
      event_type: null,
      element_tag: null,
      element_text: null,
      exception_message: null,
    });
    expect(res.body.length).toBeLessThan(EVENTS * 400);
  }, 60_000);

  it('answers two concurrent public pages of 200', async () => {
    const pages = await Promise.all(
      [0, 200].map((offset) => get(`/api/shared/${accessToken}/events?limit=200&offset=${offset}`, {})),
    );
    // A refusal shows its body (a statement timeout, the pool's share, …) in the failure.
    expect(pages.map((p) => (p.status === 200 ? 200 : `${p.status} ${p.body.slice(0, 300)}`))).toEqual([
      200, 200,
    ]);
    const [first, second] = pages.map((p) => p.json<ListBody<{ uuid: string }>>().results);
    expect([first.length, second.length]).toEqual([200, 200]);
    expect(new Set([...first, ...second].map((e) => e.uuid)).size).toBe(EVENTS);
  }, 60_000);

  it('lists events with limit=1000 in a page bounded in bytes, large values replaced by the marker', async () => {
    const res = await get(`/api/projects/${projectId}/events?limit=1000`);
    expect(res.status).toBe(200);
    const body =
      res.json<
        ListBody<{ uuid: string; properties: Record<string, unknown>; properties_truncated: boolean }>
      >();
    expect(body.count).toBe(EVENTS);
    // EVENTS_LIST_MAX_BYTES (8 MB) of ~30 KB events: the page ends early, and `next` starts after it.
    const n = body.results.length;
    expect(n).toBeGreaterThan(100);
    expect(n).toBeLessThan(EVENTS);
    const next = new URL(body.next!);
    expect([next.searchParams.get('offset'), next.searchParams.get('limit')]).toEqual([String(n), '1000']);
    for (const event of body.results) {
      expect(event.properties.big).toEqual({ $truncated: true, bytes: BIG.length + 2 });
      expect(event.properties.medium).toBe(MEDIUM);
      expect(event.properties.$current_url).toBe('https://shop.example/cart');
      expect(event.properties_truncated).toBe(true);
    }
    const rest = await get(`${next.pathname}${next.search}`);
    expect(rest.status).toBe(200);
    const more = rest.json<ListBody<{ uuid: string }>>().results;
    expect(more.length).toBeGreaterThan(0);
    const seen = new Set(body.results.map((e) => e.uuid));
    expect(more.filter((e) => seen.has(e.uuid))).toEqual([]);
  }, 60_000);

  it('lists events with the default limit, and shows one event whole', async () => {
    const list = await get(`/api/projects/${projectId}/events`);
    expect(list.status).toBe(200);
    const body = list.json<ListBody<{ properties_truncated: boolean }>>();
    expect(body.results).toHaveLength(100);
    expect(body.results.every((e) => e.properties_truncated)).toBe(true);
    const one = await get(`/api/projects/${projectId}/events/${eventUuid}`);
    expect(one.status).toBe(200);
    const event = one.json<{ properties: Record<string, unknown>; properties_truncated: boolean }>();
    expect(event.properties.big).toBe(BIG);
    expect(event.properties_truncated).toBe(false);
  }, 60_000);

  it('lists recordings with limit=20, each person a bounded view: 100 distinct ids, its count, 16 KiB of properties', async () => {
    const res = await get(`/api/projects/${projectId}/session_recordings?limit=20`);
    expect(res.status).toBe(200);
    const body = res.json<
      ListBody<{
        person: {
          name: string;
          distinct_ids: string;
          distinct_ids_count: number;
          properties: Record<string, unknown>;
          properties_truncated: boolean;
        };
      }>
    >();
    expect(body.results).toHaveLength(RECORDINGS);
    for (const { person } of body.results) {
      const ids = JSON.parse(person.distinct_ids) as string[];
      expect(ids).toHaveLength(100);
      expect(ids[0]).toBe(victim);
      expect(person.distinct_ids_count).toBe(DISTINCT_IDS);
      expect(person.name).toBe('victim@example.com');
      expect(person.properties.email).toBe('victim@example.com');
      expect(person.properties_truncated).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(person.properties))).toBeLessThanOrEqual(16 * 1024);
      expect(Object.keys(person.properties).length).toBeGreaterThan(5);
    }
  }, 60_000);

  it('stayed up and within the Deployment memory limit through every read', async () => {
    process.stdout.write(`hostile reads: RSS peak ${(peak / MiB).toFixed(0)} MiB\n`);
    expect(deaths).toEqual([]);
    expect(peak).toBeLessThan(MEMORY_LIMIT);
    expect((await rawRequest(service.base, '/healthz')).status).toBe(200);
  });
});
