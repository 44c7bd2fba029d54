/**
 * Persons have one place that applies captured events (PersonUpdatesService): the same person updates sent as
 * analytics events (`/batch/`) and as a recording's `$snapshot` events (`/s/`) give the same person, applied in
 * the order sent as PostHog applies each event ($set_once, $set, then $unset: plugin-server/src/worker/ingestion/
 * persons/person-update.ts), with PERSON_SET_MAX_KEYS counted event by event in both.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const NOW = new Date('2026-11-21T12:00:00.000Z');

/** The person updates of one request, in the order sent. */
const UPDATES: Record<string, unknown>[] = [
  { $set: { plan: 'free', a: 1, gone: true }, $set_once: { first: 'x' } },
  { $unset: ['a', 'never-set'], $set_once: { first: 'y', later: 1 } },
  { $set: { a: 2 }, $unset: ['gone'] },
  { $unset: ['plan'] },
  { $set_once: { plan: 'after-unset' } },
  // Past PERSON_SET_MAX_KEYS (8) with the 7 values before it: its $set is left out, its $unset applies.
  { $set: { b: 1, c: 2 }, $unset: ['later'] },
];
const EXPECTED = { first: 'x', a: 2, plan: 'after-unset' };

describe('one persons service for every ingestion sink', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  const personOf = async (distinctId: string) => {
    const rows = await t.dataSource.query(
      `SELECT p.properties FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
        WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [projectId, distinctId],
    );
    return (rows[0] as { properties: Record<string, unknown> } | undefined)?.properties;
  };

  beforeAll(async () => {
    t = await createTestApp({ PERSON_SET_MAX_KEYS: '8' });
    t.clock.set(NOW);
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Person sinks');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('gives the same person through /batch/ events and through a recording', async () => {
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: UPDATES.map((properties, i) => ({
          event: `update ${i}`,
          distinct_id: 'through-events',
          timestamp: new Date(T0 + i).toISOString(),
          properties,
        })),
      })
      .expect(200, { status: 1 });
    const sessionId = newSessionId();
    await t.http
      .post('/s/')
      .send(
        UPDATES.map((properties, i) =>
          snapshotEvent({
            token,
            sessionId,
            distinctId: 'through-recording',
            events: [rr.click(T0 + i)],
            properties,
          }),
        ),
      )
      .expect(200, { status: 'Ok' });
    expect(await personOf('through-events')).toEqual(EXPECTED);
    expect(await personOf('through-recording')).toEqual(EXPECTED);
  });

  it('applies a recording’s $unset, as an event’s', async () => {
    await t.http
      .post('/e/')
      .send([{ event: 'set', distinct_id: 'unset-rec', properties: { token, $set: { x: 1, y: 2 } } }])
      .expect(200);
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId: newSessionId(),
          distinctId: 'unset-rec',
          events: [rr.click(T0)],
          properties: { $unset: ['x'] },
        }),
      ])
      .expect(200, { status: 'Ok' });
    expect(await personOf('unset-rec')).toEqual({ y: 2 });
  });

  it('creates and updates no person for a $snapshot with $process_person_profile false, as for an event', async () => {
    const recordingPerson = async (sessionId: string) =>
      (
        (await t.dataSource.query(
          `SELECT r.person_id AS "personId" FROM session_recordings r WHERE r.team_id = $1 AND r.session_id = $2`,
          [projectId, sessionId],
        )) as { personId: number | null }[]
      )[0];
    const personless = (distinctId: string, sessionId: string) =>
      t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token,
            sessionId,
            distinctId,
            events: [rr.click(T0)],
            properties: { $process_person_profile: false, $set: { plan: 'pro' } },
          }),
        ])
        .expect(200, { status: 'Ok' });
    // No person yet: none is created, and the recording has none.
    const anonymous = newSessionId();
    await personless('personless-rec', anonymous);
    expect(await personOf('personless-rec')).toBeUndefined();
    expect(await recordingPerson(anonymous)).toEqual({ personId: null });
    // The same through /e/: no person either.
    await t.http
      .post('/e/')
      .send([
        { event: 'e', distinct_id: 'personless-ev', properties: { token, $process_person_profile: false } },
      ])
      .expect(200);
    expect(await personOf('personless-ev')).toBeUndefined();
    // A distinct id that has a person: the recording is attached to it, and its $set is not applied.
    await t.http
      .post('/e/')
      .send([
        { event: 'set', distinct_id: 'personless-known', properties: { token, $set: { plan: 'free' } } },
      ])
      .expect(200);
    const known = newSessionId();
    await personless('personless-known', known);
    expect(await personOf('personless-known')).toEqual({ plan: 'free' });
    const [{ id }] = (await t.dataSource.query(
      `SELECT person_id AS id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'personless-known'`,
      [projectId],
    )) as { id: number }[];
    expect(await recordingPerson(known)).toEqual({ personId: id });
  });
});
