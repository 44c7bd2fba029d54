import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { EventPartitionsScheduler } from '../../src/events/event-partitions.scheduler.js';
import { EventsIngestionService } from '../../src/events/events-ingestion.service.js';
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { onCitus } from '../support/test-database.js';
import { waitFor } from '../support/service-process.js';

interface EventRowView {
  event: string;
  distinct_id: string;
  person_id: string | null;
  properties: Record<string, unknown>;
  timestamp: Date;
  session_id: string | null;
  window_id: string | null;
  elements_chain: string;
  set: Record<string, unknown> | null;
}

describe('Analytics events: capture and the read API', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  const stored = async (uuid: string): Promise<EventRowView[]> =>
    (await t.dataSource.query(
      `SELECT event, distinct_id, person_id, properties, "timestamp", session_id, window_id, elements_chain, "set"
         FROM events WHERE uuid = $1`,
      [uuid],
    )) as EventRowView[];

  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Events');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('capture', () => {
    it('stores one event sent to /e/ with PostHog’s answer, its person, $ip, session and skew-corrected time', async () => {
      const uuid = randomUUID();
      const sentAt = Date.now() + 3600_000; // the client clock is an hour ahead
      const res = await t.http
        .post(`/e/?_=${sentAt}`)
        .set('Content-Type', 'application/json')
        .send({
          event: '$pageview',
          uuid,
          distinct_id: 'anon-1',
          timestamp: new Date(sentAt - 5000).toISOString(),
          properties: {
            token,
            $current_url: 'https://shop.example.com/',
            $session_id: 'sess-1',
            $window_id: 'win-1',
            $set: { plan: 'pro' },
          },
        })
        .expect(200);
      expect(res.body).toEqual({ status: 1 });
      const [row] = await stored(uuid);
      expect(row).toMatchObject({
        event: '$pageview',
        distinct_id: 'anon-1',
        session_id: 'sess-1',
        window_id: 'win-1',
        set: { plan: 'pro' },
      });
      expect(row.properties.$ip).toMatch(/127\.0\.0\.1/);
      expect(row.properties.token).toBeUndefined();
      // Five seconds before the request arrived, not an hour later.
      const skew = Date.now() - new Date(row.timestamp).getTime();
      expect(skew).toBeGreaterThan(4000);
      expect(skew).toBeLessThan(60_000);
      const [person] = (await t.dataSource.query(
        `SELECT p.uuid, p.properties FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
          WHERE d.team_id = $1 AND d.distinct_id = 'anon-1'`,
        [projectId],
      )) as { uuid: string; properties: Record<string, unknown> }[];
      expect(row.person_id).toBe(person.uuid);
      expect(person.properties).toEqual({ plan: 'pro' });
    });

    it('stores SQL NULL, not a JSON null, as $set and $set_once of an event without them, beside one with $set_once', async () => {
      const [plain, once] = [randomUUID(), randomUUID()];
      await t.http
        .post('/batch/')
        .send({
          api_key: token,
          batch: [
            { event: 'plain', uuid: plain, distinct_id: 'null-set', properties: {} },
            { event: 'once', uuid: once, distinct_id: 'null-set', properties: { $set_once: { first: 1 } } },
          ],
        })
        .expect(200, { status: 1 });
      const rows = (await t.dataSource.query(
        `SELECT event, "set" IS NULL AS set_null, set_once IS NULL AS set_once_null, set_once
           FROM events WHERE uuid = ANY($1::uuid[]) ORDER BY event`,
        [[plain, once]],
      )) as { event: string; set_null: boolean; set_once_null: boolean; set_once: unknown }[];
      expect(rows).toEqual([
        { event: 'once', set_null: true, set_once_null: false, set_once: { first: 1 } },
        { event: 'plain', set_null: true, set_once_null: true, set_once: null },
      ]);
    });

    it('takes {"batch", "api_key", "sent_at"} gzip on /batch/, gzip-js on /i/v0/e/, a base64 form on /capture/, and GET data= on /track/', async () => {
      const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const event = (uuid: string, name: string) => ({
        event: name,
        uuid,
        distinct_id: 'node-1',
        properties: { $lib: 'posthog-node' },
      });
      await t.http
        .post('/batch/')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        // Send the bytes as they are (the client would otherwise serialise a Buffer as JSON).
        .serialize((data: unknown) => data as string)
        .send(
          gzipSync(
            JSON.stringify({
              api_key: token,
              sent_at: new Date().toISOString(),
              batch: [event(ids[0], 'signed_up')],
            }),
          ),
        )
        .expect(200, { status: 1 });
      await t.http
        .post('/i/v0/e/?compression=gzip-js&ver=1.200.0')
        .set('Content-Type', 'text/plain')
        .send(gzipSync(JSON.stringify([{ ...event(ids[1], 'clicked'), properties: { token } }])))
        .expect(200, { status: 1 });
      const data = Buffer.from(JSON.stringify([{ ...event(ids[2], 'legacy'), api_key: token }])).toString(
        'base64',
      );
      await t.http
        .post('/capture/')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(data)}&compression=base64`)
        .expect(200, { status: 1 });
      await t.http
        .get('/track/')
        .query({ data: JSON.stringify({ ...event(ids[3], 'beacon'), token }) })
        .expect(200, { status: 1 });
      const names = await Promise.all(ids.map(async (id) => (await stored(id)).map((r) => r.event)));
      expect(names).toEqual([['signed_up'], ['clicked'], ['legacy'], ['beacon']]);
      const noData = await t.http.get('/e/').query({ compression: 'base64' }).expect(400);
      expect(noData.body).toMatchObject({ code: 'required', attr: 'data' });
      // Group events are stored as events (there are no group tables).
      const group = randomUUID();
      await t.http
        .post('/e/')
        .send({
          event: '$groupidentify',
          uuid: group,
          distinct_id: 'node-1',
          properties: { token, $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } },
        })
        .expect(200);
      expect((await stored(group)).map((r) => r.properties.$group_key)).toEqual(['acme']);
    });

    it('stores an event re-sent with the same uuid once, and a time far in the future as the time of receipt', async () => {
      const uuid = randomUUID();
      const body = [{ event: 'paid', uuid, distinct_id: 'dup-1', properties: { token, amount: 3 } }];
      await t.http.post('/e/').send(body).expect(200);
      await t.http.post('/e/').send(body).expect(200);
      expect(await stored(uuid)).toHaveLength(1);
      const future = randomUUID();
      await t.http
        .post('/e/')
        .send({
          event: 'late',
          uuid: future,
          distinct_id: 'dup-1',
          timestamp: new Date(Date.now() + 3 * 86400_000).toISOString(),
          properties: { token },
        })
        .expect(200);
      const [row] = await stored(future);
      expect(Math.abs(Date.now() - new Date(row.timestamp).getTime())).toBeLessThan(60_000);
    });

    it('writes the elements chain of 1.x autocapture events, and creates no person with $process_person_profile false', async () => {
      const uuid = randomUUID();
      await t.http
        .post('/e/')
        .send({
          event: '$autocapture',
          uuid,
          distinct_id: 'anon-no-person',
          properties: {
            token,
            $process_person_profile: false,
            $elements: [
              {
                tag_name: 'button',
                $el_text: 'Buy "now"',
                classes: ['primary', 'btn'],
                nth_child: 2,
                nth_of_type: 1,
              },
              { tag_name: 'div', attr__id: 'cart' },
            ],
          },
        })
        .expect(200);
      const [row] = await stored(uuid);
      expect(row.elements_chain).toBe(
        'button.btn.primary:nth-child="2"nth-of-type="1"text="Buy \\"now\\"";div:attr__id="cart"attr_id="cart"nth-child="0"nth-of-type="0"',
      );
      expect(row.person_id).toBeNull();
      const persons = (await t.dataSource.query(
        `SELECT 1 FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'anon-no-person'`,
        [projectId],
      )) as unknown[];
      expect(persons).toHaveLength(0);
    });

    it('stores $snapshot events sent to /e/ as recordings, like /s/', async () => {
      const sessionId = `e-snap-${Date.now()}`;
      await t.http
        .post('/e/')
        .send([
          {
            event: '$snapshot',
            distinct_id: 'snap-1',
            properties: {
              token,
              $session_id: sessionId,
              $snapshot_data: [{ type: 4, timestamp: Date.now(), data: { href: 'https://x.example/' } }],
            },
          },
        ])
        .expect(200);
      const rows = (await t.dataSource.query(
        `SELECT distinct_id FROM session_recordings WHERE session_id = $1`,
        [sessionId],
      )) as { distinct_id: string }[];
      expect(rows).toEqual([{ distinct_id: 'snap-1' }]);
    });

    it('refuses an unknown token (401), an event without a name (400) and a bad uuid (400), storing nothing', async () => {
      const uuid = randomUUID();
      const bad = await t.http
        .post('/e/')
        .send({ event: 'x', uuid, distinct_id: 'a', api_key: 'phc_unknown' })
        .expect(401);
      expect(bad.body).toMatchObject({ type: 'authentication_error', code: 'authentication_failed' });
      const noName = await t.http
        .post('/batch/')
        .send({ api_key: token, batch: [{ event: 'ok', uuid, distinct_id: 'a' }, { distinct_id: 'a' }] })
        .expect(400);
      expect(noName.body).toMatchObject({ code: 'required', attr: 'batch__1__event' });
      const badUuid = await t.http
        .post('/e/')
        .send([{ event: 'x', uuid: 'not-a-uuid', distinct_id: 'a', properties: { token } }])
        .expect(400);
      expect(badUuid.body).toMatchObject({ attr: '0__uuid' });
      expect(await stored(uuid)).toHaveLength(0);
    });

    it('drops values that cannot be stored, and an event whose distinct id has one, keeping the rest', async () => {
      const kept = randomUUID();
      const lost = randomUUID();
      await t.http
        .post('/e/')
        .send([
          {
            event: 'ok',
            uuid: kept,
            distinct_id: 'nul-1',
            properties: { token, good: 'y', bad: 'a\u0000b' },
          },
          { event: 'ok', uuid: lost, distinct_id: 'nul\u0000', properties: { token } },
        ])
        .expect(200);
      const [row] = await stored(kept);
      expect(row.properties.good).toBe('y');
      expect(row.properties).not.toHaveProperty('bad');
      expect(await stored(lost)).toHaveLength(0);
    });
  });

  describe('persons', () => {
    const personOf = async (distinctId: string) =>
      (
        (await t.dataSource.query(
          `SELECT p.id, p.properties,
             (SELECT array_agg(d2.distinct_id ORDER BY d2.distinct_id) FROM person_distinct_ids d2
               WHERE d2.team_id = p.team_id AND d2.person_id = p.id) AS ids
           FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
           WHERE d.team_id = $1 AND d.distinct_id = $2`,
          [projectId, distinctId],
        )) as { id: number; properties: Record<string, unknown>; ids: string[] }[]
      )[0];

    it('$identify puts the anonymous id on the identified person; its recordings then show that person', async () => {
      const sessionId = `ident-${Date.now()}`;
      // The identified id has a person of its own, older than the anonymous one (so the recording's person is merged away).
      await t.http
        .post('/e/')
        .send({
          event: 'login',
          distinct_id: 'ada@example.com',
          properties: { token, $set: { plan: 'pro' } },
        })
        .expect(200);
      await t.http
        .post('/s/')
        .send([
          {
            event: '$snapshot',
            distinct_id: 'anon-x',
            properties: {
              token,
              $session_id: sessionId,
              $snapshot_data: [{ type: 4, timestamp: Date.now(), data: { href: 'https://x.example/' } }],
            },
          },
        ])
        .expect(200);
      const anon = await personOf('anon-x');
      const known = await personOf('ada@example.com');
      expect(anon.id).not.toBe(known.id);
      await t.http
        .post('/e/')
        .send({
          event: '$identify',
          distinct_id: 'ada@example.com',
          properties: { token, $anon_distinct_id: 'anon-x', $set: { email: 'ada@example.com' } },
        })
        .expect(200);
      const merged = await personOf('anon-x');
      expect(merged.ids).toEqual(['ada@example.com', 'anon-x']);
      expect(merged.properties).toEqual({ plan: 'pro', email: 'ada@example.com' });
      expect(merged.id).toBe(known.id);
      const gone = (await t.dataSource.query(`SELECT 1 FROM persons WHERE id = $1`, [anon.id])) as unknown[];
      expect(gone).toHaveLength(0);
      const recording = await t.http
        .get(`/api/projects/${projectId}/session_recordings/${sessionId}/`)
        .set(owner.auth)
        .expect(200);
      // The recording's person shows its distinct ids as a JSON string (the recordings API's shape).
      expect(JSON.parse(recording.body.person.distinct_ids as string)).toEqual(['ada@example.com', 'anon-x']);
      expect(recording.body.person.properties).toMatchObject({ email: 'ada@example.com', plan: 'pro' });
    });

    it('$create_alias adds an id to the person, $set_once keeps the first value, $unset removes keys, and placeholder ids are never merged', async () => {
      await t.http
        .post('/batch/')
        .send({
          api_key: token,
          batch: [
            {
              event: 'a',
              distinct_id: 'alias-main',
              properties: { $set_once: { first: 1 }, $set: { tmp: true } },
            },
            { event: '$create_alias', distinct_id: 'alias-main', properties: { alias: 'alias-second' } },
            {
              event: 'b',
              distinct_id: 'alias-second',
              properties: { $set_once: { first: 2 }, $unset: ['tmp'] },
            },
            { event: '$identify', distinct_id: 'alias-main', properties: { $anon_distinct_id: 'undefined' } },
          ],
        })
        .expect(200);
      const person = await personOf('alias-second');
      expect(person.ids).toEqual(['alias-main', 'alias-second']);
      expect(person.properties).toEqual({ first: 1 });
      expect(await personOf('undefined')).toBeUndefined();
    });
  });

  describe('persons of many new distinct ids', () => {
    it('creates one person per new distinct id of a batch, also when concurrent batches bring the same ids', async () => {
      const ids = Array.from({ length: 60 }, (_, i) => `many-${String(i).padStart(2, '0')}`);
      const batch = (tag: string) =>
        ids.map((distinctId, i) => ({
          event: `e-${tag}`,
          uuid: randomUUID(),
          distinct_id: distinctId,
          properties: { $set: { [`from_${tag}`]: i } },
        }));
      // Four requests at once, each with every id (in another order): they race to create the same persons.
      const bodies = ['a', 'b', 'c', 'd'].map((tag, n) => {
        const events = batch(tag);
        return { api_key: token, batch: n % 2 ? events.reverse() : events };
      });
      const answers = await Promise.all(bodies.map((body) => t.http.post('/batch/').send(body)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      const rows = (await t.dataSource.query(
        `SELECT d.distinct_id, d.person_id, p.uuid, p.properties, d.version::int AS version
           FROM person_distinct_ids d JOIN persons p ON p.team_id = d.team_id AND p.id = d.person_id
          WHERE d.team_id = $1 AND d.distinct_id LIKE 'many-%' ORDER BY d.distinct_id`,
        [projectId],
      )) as {
        distinct_id: string;
        person_id: number;
        uuid: string;
        properties: Record<string, unknown>;
        version: number;
      }[];
      expect(rows.map((r) => r.distinct_id)).toEqual(ids);
      expect(new Set(rows.map((r) => r.person_id)).size).toBe(ids.length);
      // Every request's $set reached the one person of each id; the distinct ids never moved.
      for (const [i, row] of rows.entries()) {
        expect(row.properties).toEqual({ from_a: i, from_b: i, from_c: i, from_d: i });
        expect(row.version).toBe(0);
      }
      // No person was left without a distinct id by a lost race.
      const [{ orphans }] = (await t.dataSource.query(
        `SELECT count(*)::int AS orphans FROM persons p WHERE p.team_id = $1
            AND NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id)`,
        [projectId],
      )) as { orphans: number }[];
      expect(orphans).toBe(0);
      // Each stored event points at the person of its distinct id.
      const events = (await t.dataSource.query(
        `SELECT e.distinct_id, e.person_id FROM events e WHERE e.team_id = $1 AND e.distinct_id LIKE 'many-%'`,
        [projectId],
      )) as { distinct_id: string; person_id: string }[];
      expect(events).toHaveLength(4 * ids.length);
      const uuidOf = new Map(rows.map((r) => [r.distinct_id, r.uuid]));
      for (const e of events) expect(e.person_id).toBe(uuidOf.get(e.distinct_id));
    });
  });

  describe('a new distinct id another transaction takes first', () => {
    it('keeps that transaction’s person, and the one made for it here is gone', async () => {
      // Another writer gives `race-1` a person and holds its transaction open.
      const other = t.dataSource.createQueryRunner();
      await other.connect();
      await other.startTransaction();
      const [{ id: otherId, uuid: otherUuid }] = (await other.query(
        `INSERT INTO persons (team_id, properties) VALUES ($1, '{"from": "other"}') RETURNING id, uuid`,
        [projectId],
      )) as { id: number; uuid: string }[];
      await other.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, 'race-1', $2)`,
        [projectId, otherId],
      );
      const before = (await other.query(`SELECT max(id)::int AS id FROM persons`)) as { id: number }[];
      const uuid = randomUUID();
      const sent = t.http
        .post('/batch/')
        .send({
          api_key: token,
          batch: [
            { event: 'raced', uuid, distinct_id: 'race-1', properties: { $set: { plan: 'pro' } } },
            { event: 'calm', uuid: randomUUID(), distinct_id: 'race-2', properties: {} },
          ],
        })
        .then((res) => res);
      // The capture waits on the uncommitted distinct id (ON CONFLICT waits for the other transaction); on Citus
      // the wait is on the worker holding the project's shard, seen in the cluster-wide citus_stat_activity.
      await waitFor('capture waiting for the other transaction', async () => {
        const [row] = (await t.dataSource.query(
          `SELECT count(*)::int AS n FROM ${onCitus() ? 'citus_stat_activity' : 'pg_stat_activity'}
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )) as { n: number }[];
        return row.n > 0;
      });
      await other.commitTransaction();
      await other.release();
      expect((await sent).status).toBe(200);
      const [row] = await stored(uuid);
      expect(row.person_id).toBe(otherUuid);
      const persons = (await t.dataSource.query(
        `SELECT p.id, p.properties, d.distinct_id FROM persons p LEFT JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
          WHERE p.team_id = $1 AND p.id > $2 ORDER BY p.id`,
        [projectId, before[0].id],
      )) as { id: number; properties: Record<string, unknown>; distinct_id: string | null }[];
      // Only race-2's person was created by the capture; the one it made for race-1 was deleted again.
      expect(persons.map((p) => p.distinct_id)).toEqual(['race-2']);
      const [winner] = (await t.dataSource.query(`SELECT properties FROM persons WHERE id = $1`, [
        otherId,
      ])) as {
        properties: Record<string, unknown>;
      }[];
      expect(winner.properties).toEqual({ from: 'other', plan: 'pro' });
    });
  });

  describe('ingested_event', () => {
    it('is false for a new project, stays false when nothing was stored, and is true once an event is', async () => {
      const org = await t.factories.organization(owner, 'Fresh events');
      const fresh = org.teams[0];
      const flag = async () =>
        (await t.http.get(`/api/projects/${fresh.id}`).set(owner.auth).expect(200)).body
          .ingested_event as boolean;
      expect(await flag()).toBe(false);
      // Only an event older than the retention: dropped, so nothing stored.
      await t.http
        .post('/e/')
        .send({
          event: 'old',
          distinct_id: 'fresh-1',
          timestamp: '2001-01-01T00:00:00.000Z',
          properties: { token: fresh.api_token, $ignore_sent_at: true },
        })
        .expect(200);
      expect(await flag()).toBe(false);
      const uuid = randomUUID();
      await t.http
        .post('/e/?compression=gzip-js')
        .set('Content-Type', 'text/plain')
        .send(
          gzipSync(
            JSON.stringify([
              { event: '$pageview', uuid, distinct_id: 'fresh-1', properties: { token: fresh.api_token } },
            ]),
          ),
        )
        .expect(200);
      expect(await flag()).toBe(true);
      // The same event again (a duplicate, nothing new stored) leaves it set.
      await t.http
        .post('/e/')
        .send({ event: '$pageview', uuid, distinct_id: 'fresh-1', properties: { token: fresh.api_token } })
        .expect(200);
      expect(await flag()).toBe(true);
    });
  });

  describe('retention and settings', () => {
    const DAY = 86400_000;

    it('stores no $ip with anonymize_ips, from the first request after the change', async () => {
      const org = await t.factories.organization(owner, 'Anonymous');
      const team = org.teams[0];
      // A capture before the change stores $ip.
      const before = randomUUID();
      await t.http
        .post('/e/')
        .send({ event: 'x', uuid: before, distinct_id: 'a', properties: { token: team.api_token } })
        .expect(200);
      expect((await stored(before))[0].properties).toHaveProperty('$ip');
      await t.http
        .patch(`/api/projects/${team.id}`)
        .set(owner.auth)
        .send({ anonymize_ips: true })
        .expect(200);
      const uuid = randomUUID();
      await t.http
        .post('/e/')
        .send({
          event: 'x',
          uuid,
          distinct_id: 'a',
          properties: { token: team.api_token, $ip: '198.51.100.1' },
        })
        .expect(200);
      const [row] = await stored(uuid);
      expect(row.properties).not.toHaveProperty('$ip');
    });

    it('answers 401 for the token of a project deleted elsewhere, storing nothing', async () => {
      const org = await t.factories.organization(owner, 'Gone elsewhere');
      const team = org.teams[0];
      const send = (uuid: string) =>
        t.http
          .post('/e/')
          .send({ event: 'x', uuid, distinct_id: 'gone-a', properties: { token: team.api_token } });
      const first = randomUUID();
      await send(first).expect(200);
      expect(await stored(first)).toHaveLength(1);
      // Deleted in the database, as another replica would.
      await t.dataSource.query('DELETE FROM organizations WHERE id = $1', [org.id]);
      const second = randomUUID();
      const res = await send(second).expect(401);
      expect(res.body).toMatchObject({ code: 'authentication_failed', attr: 'token' });
      expect(await stored(second)).toHaveLength(0);
      await send(randomUUID()).expect(401);
    });

    it("hides a project's expired events at once, trims them for a shorter retention, drops whole expired day partitions, and a deleted organization takes its events", async () => {
      const org = await t.factories.organization(owner, 'Retention');
      const team = org.teams[0];
      const old = randomUUID();
      const fresh = randomUUID();
      await t.http
        .post('/batch/')
        .send({
          api_key: team.api_token,
          batch: [
            {
              event: 'old',
              uuid: old,
              distinct_id: 'r',
              timestamp: new Date(Date.now() - 5 * DAY).toISOString(),
            },
            { event: 'fresh', uuid: fresh, distinct_id: 'r' },
          ],
        })
        .expect(200);
      await t.http.get(`/api/projects/${team.id}/events/${old}/`).set(owner.auth).expect(200);
      await t.http
        .patch(`/api/projects/${team.id}`)
        .set(owner.auth)
        .send({ events_retention_period_days: 2 })
        .expect(200);
      // Gone from the API at once, still stored until the task runs.
      await t.http.get(`/api/projects/${team.id}/events/${old}/`).set(owner.auth).expect(404);
      const list = await t.http.get(`/api/projects/${team.id}/events/`).set(owner.auth).expect(200);
      expect((list.body.results as { id: string }[]).map((e) => e.id)).toEqual([fresh]);
      expect(await stored(old)).toHaveLength(1);
      // An event older than every retention in a partition of its own (the service's default is 365 days).
      const ancient = Date.now() - 400 * DAY;
      const ancientDay = Math.floor(ancient / DAY);
      await t.app.get(EventsIngestionService).ensureDays([ancientDay]);
      await t.dataSource.query(
        `INSERT INTO events (team_id, uuid, event, distinct_id, "timestamp") VALUES ($1, $2, 'ancient', 'r', $3)`,
        [team.id, randomUUID(), new Date(ancient)],
      );
      // Partitions are found by their bounds: the service names them on PostgreSQL, Citus's
      // create_time_partitions on a Citus cluster (docs/citus.md).
      const store = t.app.get<EventsStore>(EVENTS_STORE);
      expect(await store.preparedDays()).toContain(ancientDay);
      const result = await t.app.get(EventPartitionsScheduler).maintain();
      expect(result.dropped).toBeGreaterThanOrEqual(1);
      expect(result.deleted).toBeGreaterThanOrEqual(1);
      const days = await store.preparedDays();
      expect(days).not.toContain(ancientDay);
      expect(await stored(old)).toHaveLength(0);
      expect(await stored(fresh)).toHaveLength(1);
      // Partitions exist ahead: today and the next EVENTS_PARTITIONS_AHEAD_DAYS (3) days.
      const today = Math.floor(Date.now() / DAY);
      for (let d = today; d <= today + 3; d++) expect(days).toContain(d);
      // A second pass changes nothing (every replica runs it).
      expect(await t.app.get(EventPartitionsScheduler).maintain()).toEqual({
        created: 0,
        dropped: 0,
        deleted: 0,
        columnar: 0,
      });
      await t.http.delete(`/api/organizations/${org.id}`).set(owner.auth).expect(204);
      expect(await stored(fresh)).toHaveLength(0);
    });
  });

  describe('read API', () => {
    let other: TestUser;
    let ids: string[];

    beforeAll(async () => {
      other = await t.factories.user();
      ids = [randomUUID(), randomUUID(), randomUUID()];
      const base = Date.now() - 600_000;
      await t.http
        .post('/batch/')
        .send({
          api_key: token,
          batch: ids.map((uuid, i) => ({
            event: i === 1 ? 'checkout' : 'read-api',
            uuid,
            distinct_id: i === 2 ? 'reader-2' : 'reader-1',
            timestamp: new Date(base + i * 1000).toISOString(),
            properties: { $session_id: 'read-sess', step: i },
          })),
        })
        .expect(200);
    });

    it('lists newest first with filters, and retrieves one event', async () => {
      const all = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ session_id: 'read-sess' })
        .set(owner.auth)
        .expect(200);
      expect(all.body.count).toBe(3);
      expect((all.body.results as { id: string }[]).map((e) => e.id)).toEqual([ids[2], ids[1], ids[0]]);
      const byEvent = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ event: 'checkout', session_id: 'read-sess' })
        .set(owner.auth)
        .expect(200);
      expect((byEvent.body.results as { id: string }[]).map((e) => e.id)).toEqual([ids[1]]);
      const byDistinct = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ distinct_id: 'reader-2' })
        .set(owner.auth)
        .expect(200);
      expect((byDistinct.body.results as { id: string }[]).map((e) => e.id)).toEqual([ids[2]]);
      const byProperty = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ properties: JSON.stringify([{ key: 'step', value: 0, operator: 'exact', type: 'event' }]) })
        .set(owner.auth)
        .expect(200);
      expect((byProperty.body.results as { id: string }[]).map((e) => e.id)).toEqual([ids[0]]);
      const page = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ session_id: 'read-sess', limit: 1 })
        .set(owner.auth)
        .expect(200);
      expect(page.body.next).toContain('offset=1');
      const [person] = (await t.dataSource.query(
        `SELECT p.uuid FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
          WHERE d.team_id = $1 AND d.distinct_id = 'reader-1'`,
        [projectId],
      )) as { uuid: string }[];
      const byPerson = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ person_id: person.uuid })
        .set(owner.auth)
        .expect(200);
      expect((byPerson.body.results as { id: string }[]).map((e) => e.id)).toEqual([ids[1], ids[0]]);
      const one = await t.http
        .get(`/api/projects/${projectId}/events/${ids[1]}/`)
        .set(owner.auth)
        .expect(200);
      expect(one.body).toMatchObject({
        id: ids[1],
        event: 'checkout',
        distinct_id: 'reader-1',
        person_id: person.uuid,
        session_id: 'read-sess',
        properties: { step: 1, $session_id: 'read-sess' },
      });
    });

    it('answers 401 without a key, 403 without query:read, 404 for another organization or unknown event, 400 for bad filters', async () => {
      await t.http.get(`/api/projects/${projectId}/events/`).expect(401);
      const noScope = await t.factories.keyFor(owner, 'session_recording:read');
      const denied = await t.http.get(`/api/projects/${projectId}/events/`).set(noScope).expect(403);
      expect(denied.body.detail).toContain('query:read');
      const scoped = await t.factories.keyFor(owner, 'query:read');
      await t.http.get(`/api/projects/${projectId}/events/${ids[0]}/`).set(scoped).expect(200);
      await t.http.get(`/api/projects/${projectId}/events/`).set(other.auth).expect(404);
      await t.http.get(`/api/projects/${projectId}/events/${ids[0]}/`).set(other.auth).expect(404);
      await t.http.get(`/api/projects/${projectId}/events/${randomUUID()}/`).set(owner.auth).expect(404);
      await t.http.get(`/api/projects/${projectId}/events/not-a-uuid/`).set(owner.auth).expect(404);
      const badAfter = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ after: 'yesterday' })
        .set(owner.auth)
        .expect(400);
      expect(badAfter.body).toMatchObject({ attr: 'after' });
      const badProps = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ properties: '[{"key":"a","value":1,"operator":"icontains"}]' })
        .set(owner.auth)
        .expect(400);
      expect(badProps.body).toMatchObject({ attr: 'properties' });
      await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ offset: 9999, limit: 10 })
        .set(owner.auth)
        .expect(400);
    });

    it("carries each event's person as PostHog does: the distinct id's person now, its first id and three properties", async () => {
      const anon = randomUUID();
      const [seen, identify, other, unprocessed] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const base = Date.now() - 300_000;
      const at = (i: number) => new Date(base + i * 1000).toISOString();
      await t.http
        .post('/batch/')
        .send({
          api_key: token,
          batch: [
            {
              event: 'seen',
              uuid: seen,
              distinct_id: anon,
              timestamp: at(0),
              properties: { $session_id: 'who' },
            },
            {
              event: 'bought',
              uuid: other,
              distinct_id: 'who-other',
              timestamp: at(1),
              properties: { $session_id: 'who', $set: { plan: 'free' } },
            },
            {
              event: 'anonymous',
              uuid: unprocessed,
              distinct_id: 'who-nobody',
              timestamp: at(2),
              properties: { $session_id: 'who', $process_person_profile: false },
            },
          ],
        })
        .expect(200);
      // Identified later: the earlier event's distinct id now belongs to an identified person.
      await t.http
        .post('/e/')
        .send({
          api_key: token,
          event: '$identify',
          uuid: identify,
          distinct_id: 'who@example.com',
          timestamp: at(3),
          properties: {
            $session_id: 'who',
            $anon_distinct_id: anon,
            $set: { email: 'who@example.com', username: 'who', plan: 'pro', name: 'W'.repeat(2000) },
          },
        })
        .expect(200);
      const res = await t.http
        .get(`/api/projects/${projectId}/events/`)
        .query({ session_id: 'who' })
        .set(owner.auth)
        .expect(200);
      const byId = new Map(
        (res.body.results as { id: string; person: unknown }[]).map((e) => [e.id, e.person]),
      );
      const identified = {
        is_identified: true,
        // Its oldest distinct id only; email and username, not `plan`, nor a `name` past 1,000 bytes.
        distinct_ids: [anon],
        properties: { email: 'who@example.com', username: 'who' },
      };
      expect(byId.get(seen)).toEqual(identified);
      expect(byId.get(identify)).toEqual(identified);
      expect(byId.get(other)).toEqual({ is_identified: false, distinct_ids: ['who-other'], properties: {} });
      expect(byId.get(unprocessed)).toBeNull();
      const one = await t.http.get(`/api/projects/${projectId}/events/${seen}/`).set(owner.auth).expect(200);
      expect(one.body.person).toEqual(identified);
    });
  });
});
