import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { compressToBase64 } from '../support/lz-string.js';

/**
 * Capture's edge cases as PostHog's capture answers them (docs/compatibility.md, "Capture edge cases"): LZ-string
 * bodies, events of two projects, personless events of a known person, historical migrations past the
 * retention, and capture v1.
 */
describe('capture edge cases', () => {
  let t: TestApp;
  let projectId: number;
  let token: string;
  let otherToken: string;
  let otherProjectId: number;

  const eventCount = async (teamId: number) => {
    const [row] = await t.dataSource.query('SELECT count(*)::int AS n FROM events WHERE team_id = $1', [
      teamId,
    ]);
    return (row as { n: number }).n;
  };
  const stored = async (uuid: string) => {
    const rows = (await t.dataSource.query(
      'SELECT event, distinct_id, person_id, properties FROM events WHERE uuid = $1',
      [uuid],
    )) as {
      event: string;
      distinct_id: string;
      person_id: string | null;
      properties: Record<string, unknown>;
    }[];
    return rows;
  };
  const personOf = async (distinctId: string) => {
    const [row] = await t.dataSource.query(
      `SELECT p.uuid FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
        WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [projectId, distinctId],
    );
    return (row as { uuid: string } | undefined)?.uuid ?? null;
  };

  beforeAll(async () => {
    // A small body limit, so that a body decompressing past it is quick to make.
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0', RECORDING_BODY_LIMIT: '200kb' });
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Edge cases');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    const other = await t.factories.organization(await t.factories.user(), 'Other');
    otherProjectId = other.teams[0].id;
    otherToken = other.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('compression=lz64', () => {
    const events = (uuid: string) =>
      JSON.stringify([
        { event: 'lz event', uuid, distinct_id: 'lz-user', properties: { token, word: 'Žluťoučký' } },
      ]);

    it('decodes a form whose data is LZ-string base64 (the query names it), as posthog-js 1.x sends it', async () => {
      const uuid = randomUUID();
      await t.http
        .post('/e/?compression=lz64')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(compressToBase64(events(uuid)))}`)
        .expect(200, { status: 1 });
      expect(await stored(uuid)).toMatchObject([{ event: 'lz event', properties: { word: 'Žluťoučký' } }]);
    });

    it('decodes the form field compression=lz-string, a raw LZ-string body and a GET with data=', async () => {
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      await t.http
        .post('/batch/')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(compressToBase64(events(a)))}&compression=lz-string`)
        .expect(200, { status: 1 });
      await t.http
        .post('/i/v0/e/?compression=lz64')
        .set('Content-Type', 'text/plain')
        .send(compressToBase64(events(b)))
        .expect(200, { status: 1 });
      await t.http
        .get('/e/')
        .query({ data: compressToBase64(events(c)), compression: 'lz64' })
        .expect(200, { status: 1 });
      for (const uuid of [a, b, c]) expect(await stored(uuid)).toHaveLength(1);
    });

    it('answers 400 for data that is not LZ-string, and 413 for one that decompresses past the body limit', async () => {
      const bad = await t.http
        .post('/e/?compression=lz64')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('data=%21%21%21%21')
        .expect(400);
      expect(bad.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'The data is not valid LZ-string base64 (compression=lz64).',
        attr: 'data',
      });
      const bomb = compressToBase64(
        `[{"event":"x","distinct_id":"d","properties":{"token":"${token}","p":"${'A'.repeat(300_000)}"}}]`,
      );
      expect(bomb.length).toBeLessThan(10_000);
      const res = await t.http.post('/e/?compression=lz64').set('Content-Type', 'text/plain').send(bomb);
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('payload_too_large');
    });
  });

  it("answers 401 to events of two projects' tokens without a batch token, and stores nothing", async () => {
    const before = [await eventCount(projectId), await eventCount(otherProjectId)];
    const res = await t.http.post('/batch/').send([
      { event: 'a', distinct_id: 'd', properties: { token } },
      { event: 'b', distinct_id: 'd', properties: { token: otherToken } },
    ]);
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 401,
      body: {
        type: 'authentication_error',
        code: 'authentication_failed',
        detail:
          "The request holds events of more than one project: event 1's token differs from the request's. Send each project's events in a request of its own.",
        attr: '1__token',
      },
    });
    expect([await eventCount(projectId), await eventCount(otherProjectId)]).toEqual(before);
  });

  it('attaches an event with $process_person_profile false to the person its distinct id already has', async () => {
    await t.http
      .post('/e/')
      .send({ event: 'identified', distinct_id: 'known-user', properties: { token, $set: { plan: 'pro' } } })
      .expect(200);
    const person = await personOf('known-user');
    expect(person).not.toBeNull();
    const [known, unknown] = [randomUUID(), randomUUID()];
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [
          {
            event: 'p',
            uuid: known,
            distinct_id: 'known-user',
            properties: { $process_person_profile: false, $set: { plan: 'free' } },
          },
          {
            event: 'p',
            uuid: unknown,
            distinct_id: 'never-seen',
            properties: { $process_person_profile: false },
          },
        ],
      })
      .expect(200);
    expect((await stored(known))[0].person_id).toBe(person);
    expect((await stored(unknown))[0].person_id).toBeNull();
    // Still no person is created or updated by such events.
    expect(await personOf('never-seen')).toBeNull();
    const [props] = await t.dataSource.query(`SELECT p.properties FROM persons p WHERE p.uuid = $1`, [
      person,
    ]);
    expect(props.properties).toEqual({ plan: 'pro' });
  });

  describe('historical_migration', () => {
    const old = '2015-03-01T10:00:00.000Z';

    it('refuses a batch with an event older than the retention (400 naming it), storing none of it', async () => {
      const before = await eventCount(projectId);
      const recent = randomUUID();
      const res = await t.http.post('/batch/').send({
        api_key: token,
        historical_migration: true,
        batch: [
          { event: 'imported', uuid: recent, distinct_id: 'imp', timestamp: new Date().toISOString() },
          { event: 'imported', uuid: randomUUID(), distinct_id: 'imp', timestamp: old },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        type: 'validation_error',
        code: 'older_than_retention',
        attr: 'batch__1__timestamp',
      });
      expect(res.body.detail).toMatch(
        /^Event 1 of this historical migration is older than the project's events retention \(\d+ days: events before .+ are deleted\), so it would not be kept\. Nothing of the request was stored/,
      );
      expect(await eventCount(projectId)).toBe(before);
      expect(await stored(recent)).toHaveLength(0);
    });

    it('stores a historical migration within the retention; outside one, an expired event is dropped as before', async () => {
      const [imported, live] = [randomUUID(), randomUUID()];
      await t.http
        .post('/batch/')
        .send({
          api_key: token,
          historical_migration: true,
          batch: [
            {
              event: 'imported',
              uuid: imported,
              distinct_id: 'imp',
              timestamp: new Date(Date.now() - 86_400_000).toISOString(),
            },
          ],
        })
        .expect(200, { status: 1 });
      expect(await stored(imported)).toHaveLength(1);
      await t.http
        .post('/batch/')
        .send({ api_key: token, batch: [{ event: 'late', uuid: live, distinct_id: 'x', timestamp: old }] })
        .expect(200, { status: 1 });
      expect(await stored(live)).toHaveLength(0);
    });
  });

  it('answers capture v1 with a 404 naming the v0 endpoints', async () => {
    const res = await t.http
      .post('/i/v1/analytics/events')
      .set('Authorization', `Bearer ${token}`)
      .send({
        created_at: new Date().toISOString(),
        batch: [{ event: 'x', distinct_id: 'd', uuid: randomUUID() }],
      });
    expect({ status: res.status, body: res.body as unknown }).toEqual({
      status: 404,
      body: {
        type: 'invalid_request',
        code: 'capture_v1_not_supported',
        detail:
          "Capture v1 (POST /i/v1/analytics/events) is not served here. Send events with capture v0: POST /batch/ (or /i/v0/e/) with the project token in the body, which is what the SDKs do by default (posthog-node and posthog-python without capture_mode 'v1', posthog-go with CaptureModeLegacy).",
        attr: null,
      },
    });
  });
});
